-- Every message to a device moves its inbox_seq and every acknowledgement its acked_seq.
-- Neither is indexed, so with free room on the page PostgreSQL updates the row in place
-- (a HOT update: no new entry in any of the devices indexes). Leave that room.
ALTER TABLE devices SET (fillfactor = 70);
