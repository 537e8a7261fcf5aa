-- Rows the push path updates for every copy are updated in place where PostgreSQL can
-- (a HOT update: no new entry in any index), which needs free room on the page and no
-- indexed column changing.
--
-- Every message to a device moves its inbox_seq and every acknowledgement its acked_seq;
-- neither is indexed.
ALTER TABLE devices SET (fillfactor = 70);

-- Every routed copy moves its delivery from 'pending' to its outcome. A partial index on
-- state = 'pending' made each of those updates a new row version with new index entries;
-- the copies of a message still pending are found through the primary key instead.
DROP INDEX deliveries_pending;
ALTER TABLE deliveries SET (fillfactor = 70);
