-- Two changes to the messages table, whose rows every push writes.
--
-- 1. A message no longer carries a foreign key to its app. The key checked every inserted
--    message with a query of its own that locked the app's row: a group commit of sixty
--    pushes ran sixty checks of the same app, about a twelfth of its statement's time.
--    The statements that store messages lock their apps' rows FOR KEY SHARE once instead
--    (as the check did), and store nothing for an app deleted meanwhile. What ON DELETE
--    CASCADE did is done by the trigger below: deleting apps deletes their messages in
--    one statement, whose own trigger (migration 0005) deletes their jobs and deliveries.
--
-- 2. The request is kept as json, as it was written, not as jsonb. JSON allows "\u0000"
--    in a string and a push may carry it; jsonb refuses it, so such a push failed to be
--    stored. Herald only ever reads the request back whole. (This rewrites the table.)
ALTER TABLE messages DROP CONSTRAINT messages_app_id_fkey;

CREATE FUNCTION herald_apps_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM messages WHERE app_id IN (SELECT id FROM gone);
    RETURN NULL;
END
$$;
CREATE TRIGGER apps_deleted AFTER DELETE ON apps
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION herald_apps_deleted();

ALTER TABLE messages ALTER COLUMN request TYPE json USING request::json;
