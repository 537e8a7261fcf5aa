-- ActivityKit tokens of iOS devices, for Live Activity pushes (`live_activity`).
--
--   kind 'start'   the device's push-to-start token for one attributes type (`key`);
--                  a `live_activity.ios.event` "start" goes to it
--   kind 'update'  the update token of one running activity (`key` = its
--                  `live_activity_id`); "update" and "end" go to it
--
-- The device registers and removes them through
-- `/v3/devices/{registration_id}/live_activities/...`; they go with the device. APNs
-- takes them in the device's `apns_environment`.
CREATE TABLE live_activity_tokens (
    device_id              bigint NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    app_id                 bigint NOT NULL,
    kind                   text NOT NULL CHECK (kind IN ('start', 'update')),
    key                    text NOT NULL,
    token                  text NOT NULL,
    updated_at             timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (device_id, kind, key)
);

-- An update or end finds its activity's devices by app and id.
CREATE INDEX live_activity_tokens_by_key ON live_activity_tokens (app_id, kind, key);

-- SMS fallback (`sms_message`): one row per (message, device) the push had not reached
-- (acknowledged over the connection, or taken by APNs) when its delay ran out. The
-- primary key makes it at most one SMS per device and push, whichever node plans it and
-- however often.
--
--   pending    to send at `next_attempt_at`
--   sending    claimed by a node (`FOR UPDATE SKIP LOCKED`) until `next_attempt_at`, its
--              lease; one left by a dead node is claimed again, with the same
--              idempotency key for the provider
--   sent       the provider took it (`sent_at`)
--   failed     the provider refused it, or every attempt failed (`error`)
--   cancelled  the message was recalled or replaced before it was sent
--   skipped    the copy reached the device after all, or the device has no mobile number
CREATE TABLE sms_outbox (
    message_id             bigint NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    device_id              bigint NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    app_id                 bigint NOT NULL,
    state                  text NOT NULL DEFAULT 'pending'
                           CHECK (state IN ('pending', 'sending', 'sent', 'failed', 'cancelled', 'skipped')),
    attempts               integer NOT NULL DEFAULT 0,
    next_attempt_at        timestamptz NOT NULL DEFAULT now(),
    error                  text,
    sent_at                timestamptz,
    PRIMARY KEY (message_id, device_id)
);
CREATE INDEX sms_outbox_due ON sms_outbox (next_attempt_at) WHERE state IN ('pending', 'sending');

-- When a message's SMS were planned (its outbox rows written); NULL while its delay runs.
-- Only messages whose request names `sms_message` are indexed. The request is `json`
-- kept as written, which may hold "\u0000" in a key: reading it with `->` would fail for
-- such a message, so the index looks at its text, and the planner reads the delay
-- through `herald_sms_delay` (NULL when the request has none, or can't be read).
ALTER TABLE messages ADD COLUMN sms_planned_at timestamptz;
CREATE INDEX messages_sms_due ON messages (created_at)
    WHERE strpos(request::text, '"sms_message"') > 0 AND sms_planned_at IS NULL;

CREATE FUNCTION herald_sms_delay(p_request json) RETURNS integer LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    RETURN (p_request -> 'sms_message' ->> 'delay_time')::integer;
EXCEPTION WHEN others THEN
    RETURN NULL;
END $$;

-- The request's `sms_message` as text, NULL when it has none or can't be read.
CREATE FUNCTION herald_sms_message(p_request json) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    RETURN (p_request -> 'sms_message')::text;
EXCEPTION WHEN others THEN
    RETURN NULL;
END $$;

-- Mobile numbers sealed at rest, like the APNs credentials: AES-GCM under the node's
-- credential key (`CredentialSealer`), bound to the app (context `mobile:<app id>`), with
-- the sealing key's id. SQL can't seal (it has no key), so the clear column `mobile`
-- (migration 0016) stays for now: every node's center seals what it holds, in batches,
-- from its start on (`CenterStore.sealClearMobiles`), and empties it. The device API
-- writes sealed numbers only; an import writes the clear column, sealed within a poll.
-- A later migration drops `mobile` once it is empty everywhere.
ALTER TABLE devices ADD COLUMN mobile_sealed bytea;
ALTER TABLE devices ADD COLUMN mobile_key text;
CREATE INDEX devices_clear_mobile ON devices (id) WHERE mobile IS NOT NULL;

-- An app's own SMS provider over HTTP (`/admin/v1/apps/{app_key}/sms`): its
-- configuration, secret included, sealed like the APNs credentials (context: the app
-- key); without one the node's default provider sends the app's SMS.
ALTER TABLE apps ADD COLUMN sms_provider bytea;
ALTER TABLE apps ADD COLUMN sms_provider_key text;
ALTER TABLE apps ADD COLUMN sms_provider_updated_at timestamptz;
