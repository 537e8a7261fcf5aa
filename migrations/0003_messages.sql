-- Messages accepted by the push API, the jobs that fan them out, and one delivery row per
-- targeted device. A push is accepted when its message and job are committed together.
CREATE TABLE messages (
    id                     bigserial PRIMARY KEY,
    msg_id                 text NOT NULL UNIQUE,
    app_id                 bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    -- The client's idempotency key: a repeated cid within 24 h returns the first msg_id.
    cid                    text,
    -- The validated request, as JSON (PushRequest).
    request                jsonb NOT NULL,
    -- The identifier on the device (apns-collapse-id); replace and recall refer to it.
    identifier             text NOT NULL,
    replaces               text,
    time_to_live           integer NOT NULL,
    expires_at             timestamptz NOT NULL,
    created_at             timestamptz NOT NULL DEFAULT now(),
    fanned_out_at          timestamptz,
    recalled_at            timestamptz,
    -- Set when a later push replaced this one: undelivered copies are never delivered.
    superseded_at          timestamptz
);
CREATE UNIQUE INDEX messages_app_cid ON messages (app_id, cid) WHERE cid IS NOT NULL;
CREATE INDEX messages_app_identifier ON messages (app_id, identifier, created_at);

-- Work for the center: fan a message out ('push') or send its recall commands ('recall').
-- Workers claim a job with FOR UPDATE SKIP LOCKED and hold a lease; the cursor is the last
-- device id fanned out, so a job taken over after a crash resumes where it stopped.
CREATE TABLE push_jobs (
    id                     bigserial PRIMARY KEY,
    message_id             bigint NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    kind                   text NOT NULL CHECK (kind IN ('push', 'recall')),
    cursor_device          bigint NOT NULL DEFAULT 0,
    available_at           timestamptz NOT NULL DEFAULT now(),
    leased_until           timestamptz,
    leased_by              text,
    attempts               integer NOT NULL DEFAULT 0,
    created_at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX push_jobs_available ON push_jobs (available_at, id);

-- One row per (message, targeted device). state:
--   pending   fanned out, not routed yet (re-routed after a crash)
--   tcp       acknowledged over the long connection
--   apns      accepted by APNs
--   waiting   in the device's inbox until it connects, or an APNs retry is due
--   failed    APNs refused it for good (apns_reason), or no channel can reach the device
--   recalled  cancelled by a recall before it was delivered
--   replaced  superseded by a replacing push before it was delivered
--   expired   its time to live passed (TTL 0: the device was offline)
CREATE TABLE deliveries (
    message_id             bigint NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    device_id              bigint NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    state                  text NOT NULL DEFAULT 'pending',
    inbox_seq              bigint,
    apns_reason            text,
    apns_attempts          integer NOT NULL DEFAULT 0,
    next_attempt_at        timestamptz,
    routed_at              timestamptz,
    opened_at              timestamptz,
    PRIMARY KEY (message_id, device_id)
);
CREATE INDEX deliveries_device ON deliveries (device_id);
CREATE INDEX deliveries_retry ON deliveries (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
CREATE INDEX deliveries_pending ON deliveries (message_id) WHERE state = 'pending';

-- Identifiers recalled on a device and not yet confirmed by it: every APNs recall push
-- carries all of them, because APNs coalesces background pushes.
CREATE TABLE device_recalls (
    device_id              bigint NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    identifier             text NOT NULL,
    recalled_at            timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (device_id, identifier)
);

-- The badge Herald last set on the device ("+N" pushes change it).
ALTER TABLE devices ADD COLUMN badge integer NOT NULL DEFAULT 0;
-- The device said its app went to the background: notifications go to APNs at once.
ALTER TABLE devices ADD COLUMN in_background boolean NOT NULL DEFAULT false;

-- APNs refused the app's credentials: nothing goes to APNs for it until they are replaced.
ALTER TABLE apps ADD COLUMN apns_broken_reason text;
ALTER TABLE apps ADD COLUMN apns_broken_at timestamptz;
