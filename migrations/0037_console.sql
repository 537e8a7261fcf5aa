-- The web console (issue #31). Where a message came from: NULL for the API, 'console' for a
-- person's push from the console's composer (a schedule's messages are named by
-- schedule_runs). And the devices an app tests with: the composer's "test devices only"
-- sends to them (JPush's test mode, OneSignal's test users).
ALTER TABLE messages ADD COLUMN source text;
ALTER TABLE devices ADD COLUMN test boolean NOT NULL DEFAULT false;
CREATE INDEX devices_test ON devices (app_id) WHERE test;
