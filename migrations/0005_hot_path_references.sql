-- The rows every push writes (its job, and per device its inbox row and its delivery) no
-- longer carry foreign keys. A foreign key checks every inserted row with a query of its
-- own (and locks the referenced row): five checks per push to one device, about a sixth of
-- PostgreSQL's time on the push path. The statements that write these rows already take
-- what the checks guaranteed:
--   - a job and its delivery rows are written in the statement that writes their message,
--     or by the center for a message it has just read;
--   - inbox and delivery rows are written after their devices are locked (the inbox seq
--     update), or, for a push whose copies aren't stored, from devices locked FOR KEY SHARE
--     as the foreign key did.
-- What ON DELETE CASCADE did is done by the triggers below: deleting devices or messages
-- (an app's, when the app is deleted) deletes their rows in one statement per table.
ALTER TABLE push_jobs DROP CONSTRAINT push_jobs_message_id_fkey;
ALTER TABLE device_messages DROP CONSTRAINT device_messages_device_id_fkey;
ALTER TABLE deliveries DROP CONSTRAINT deliveries_message_id_fkey;
ALTER TABLE deliveries DROP CONSTRAINT deliveries_device_id_fkey;

CREATE FUNCTION herald_devices_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM device_messages WHERE device_id IN (SELECT id FROM gone);
    DELETE FROM deliveries WHERE device_id IN (SELECT id FROM gone);
    RETURN NULL;
END
$$;
CREATE TRIGGER devices_deleted AFTER DELETE ON devices
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION herald_devices_deleted();

CREATE FUNCTION herald_messages_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM push_jobs WHERE message_id IN (SELECT id FROM gone);
    DELETE FROM deliveries WHERE message_id IN (SELECT id FROM gone);
    RETURN NULL;
END
$$;
CREATE TRIGGER messages_deleted AFTER DELETE ON messages
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION herald_messages_deleted();
