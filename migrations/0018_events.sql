-- The delivery event log, the app webhooks that read it, and JPush's per-push callbacks.
--
-- Only apps that use events pay for them: an app records every event when
-- `events_enabled` is set or it has a webhook; a push with a `callback` records its own
-- (`messages.events`). Every other push writes nothing here, and the statements of the
-- push path check a flag their caller passes, not a table (docs/webhooks.md).
ALTER TABLE apps ADD COLUMN events_enabled boolean NOT NULL DEFAULT false;
-- Whether this message's events are recorded (decided when it is accepted).
ALTER TABLE messages ADD COLUMN events boolean NOT NULL DEFAULT false;

-- What happened to messages and their copies, in the order of their commits.
--
-- Readers page by (xid, id), not by id: a bigserial is taken when a row is inserted, not
-- when it commits, so a row with a smaller id can become visible after one with a larger
-- id, and a reader past the larger id would skip it for good. A reader instead reads only
-- rows whose transaction is older than every transaction still running
-- (`xid < pg_snapshot_xmin(pg_current_snapshot())`): that set never grows below the
-- cursor, so a cursor (xid, id) skips nothing. The price: the log is read no further than
-- the oldest open writing transaction.
CREATE TABLE events (
    id                     bigserial PRIMARY KEY,
    xid                    xid8 NOT NULL DEFAULT pg_current_xact_id(),
    app_id                 bigint NOT NULL,
    -- accepted, stored, sent_tcp, acknowledged, sent_apns, failed, expired,
    -- token_invalidated, opened, recalled
    type                   text NOT NULL,
    message_id             bigint,
    msg_id                 text,
    -- NULL for what happens to the message as a whole (accepted, recalled).
    device_id              bigint,
    registration_id        text,
    at                     timestamptz NOT NULL DEFAULT clock_timestamp(),
    data                   jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX events_app_cursor ON events (app_id, xid, id);
-- A copy's timeline, and "not recorded yet" checks.
CREATE INDEX events_message ON events (message_id, device_id);
-- The purge deletes by age; rows are appended in time order, so a BRIN index is enough.
CREATE INDEX events_at ON events USING brin (at);

-- The JPush callback of a push (`callback: {url, params, type}`), written with its message.
CREATE TABLE message_callbacks (
    message_id             bigint PRIMARY KEY,
    app_id                 bigint NOT NULL,
    url                    text NOT NULL,
    params                 json,
    -- 1 received, 2 clicked, 8 sent
    type                   integer NOT NULL
);
CREATE INDEX message_callbacks_app ON message_callbacks (app_id);

-- Callback requests to make: written in the statement that records their event, sent by
-- the center's callback worker, deleted once answered 2xx; kept with `failed_at` when
-- retries ran out (center.webhookRetryFor).
CREATE TABLE callback_outbox (
    id                     bigserial PRIMARY KEY,
    app_id                 bigint NOT NULL,
    url                    text NOT NULL,
    body                   text NOT NULL,
    attempts               integer NOT NULL DEFAULT 0,
    next_attempt_at        timestamptz NOT NULL DEFAULT now(),
    created_at             timestamptz NOT NULL DEFAULT now(),
    failed_at              timestamptz,
    last_status            integer,
    last_error             text
);
CREATE INDEX callback_outbox_due ON callback_outbox (next_attempt_at) WHERE failed_at IS NULL;

-- An app's webhook endpoints. Each reads the event log from its own cursor; one node at a
-- time sends to it (the lease), in order, moving the cursor only after a 2xx.
CREATE TABLE webhooks (
    id                     bigserial PRIMARY KEY,
    app_id                 bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    url                    text NOT NULL,
    -- The event types sent; empty for all.
    types                  text[] NOT NULL DEFAULT '{}',
    -- The signing secret, sealed as APNs credentials are.
    secret                 bytea NOT NULL,
    secret_key             text NOT NULL,
    enabled                boolean NOT NULL DEFAULT true,
    created_at             timestamptz NOT NULL DEFAULT now(),
    cursor_xid             xid8 NOT NULL,
    cursor_id              bigint NOT NULL DEFAULT 0,
    leased_by              text,
    leased_until           timestamptz,
    -- Failed attempts of the batch at the cursor, since when, and when to try again.
    failures               integer NOT NULL DEFAULT 0,
    failing_since          timestamptz,
    retry_at               timestamptz,
    delivered              bigint NOT NULL DEFAULT 0,
    last_success_at        timestamptz,
    last_failure_at        timestamptz,
    last_failure_status    integer,
    last_failure_error     text
);
CREATE INDEX webhooks_app ON webhooks (app_id);

-- Batches a webhook gave up on after center.webhookRetryFor: the cursor moved past them.
CREATE TABLE webhook_failures (
    id                     bigserial PRIMARY KEY,
    webhook_id             bigint NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    first_event_id         bigint NOT NULL,
    last_event_id          bigint NOT NULL,
    events                 integer NOT NULL,
    attempts               integer NOT NULL,
    status                 integer,
    error                  text,
    first_attempt_at       timestamptz,
    failed_at              timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_failures_webhook ON webhook_failures (webhook_id, id);

-- The JPush callback bit an event answers to: 1 received, 2 clicked, 8 sent.
CREATE FUNCTION herald_callback_bit(p_type text) RETURNS integer LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE p_type WHEN 'acknowledged' THEN 1 WHEN 'opened' THEN 2 WHEN 'sent_tcp' THEN 8 WHEN 'sent_apns' THEN 8 ELSE 0 END
$$;

-- The body of a JPush callback request for one event (docs/webhooks.md).
CREATE FUNCTION herald_callback_body(
    p_type text, p_msg_id text, p_registration_id text, p_at timestamptz, p_data jsonb, p_params json
) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT json_build_object(
        'msg_id', p_msg_id, 'registration_id', p_registration_id, 'type', herald_callback_bit(p_type),
        'status', CASE herald_callback_bit(p_type) WHEN 1 THEN 'received' WHEN 2 THEN 'clicked' ELSE 'sent' END,
        'event', p_type, 'channel', p_data->>'channel',
        'timestamp', floor(extract(epoch FROM p_at) * 1000)::bigint, 'params', p_params
    )::text
$$;

-- herald_record_deliveries (migrations 0008 and 0012), with the events of the copies whose
-- messages record them. `p_event_rows`: the positions (from 1) in the other arrays of
-- those copies, `p_event_data`: what each adds to its events (the apns-id and status of
-- an APNs answer, `sent_tcp` for a copy sent over the MQTT connection without an
-- acknowledgement). Without such copies (every push of an app without events) it runs the
-- statement it ran before, unchanged; with them, a second form that also writes their
-- events and callback requests. Both keep 0012's settings: planned on each call, every row
-- reached through its key.
DROP FUNCTION herald_record_deliveries(bigint[], bigint[], text[], text[], timestamptz[], integer[], bigint[]);
CREATE FUNCTION herald_record_deliveries(
    p_messages bigint[], p_devices bigint[], p_states text[], p_reasons text[],
    p_retries timestamptz[], p_attempted integer[], p_jobs bigint[],
    p_event_rows integer[], p_event_data jsonb[]
) RETURNS void LANGUAGE plpgsql
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET enable_material = off
SET plan_cache_mode = force_custom_plan AS $$
BEGIN
    IF cardinality(p_event_rows) = 0 THEN
        WITH recorded AS (
            UPDATE deliveries dl SET state = v.state, apns_reason = NULLIF(v.reason, ''),
                next_attempt_at = CASE WHEN v.retry > 'epoch'::timestamptz THEN v.retry END,
                apns_attempts = dl.apns_attempts + v.attempted, routed_at = now()
            FROM unnest(p_messages, p_devices, p_states, p_reasons, p_retries, p_attempted)
                AS v(message_id, id, state, reason, retry, attempted)
            WHERE dl.message_id = v.message_id AND dl.device_id = v.id AND dl.state IN ('pending', 'waiting')
        ), finished AS (
            DELETE FROM push_jobs WHERE id = ANY(p_jobs) RETURNING message_id, kind
        )
        UPDATE messages SET fanned_out_at = now()
        WHERE id = ANY(ARRAY(SELECT message_id FROM finished WHERE kind = 'push')) AND fanned_out_at IS NULL;
        RETURN;
    END IF;
    WITH v AS (
        SELECT * FROM unnest(p_messages, p_devices, p_states, p_reasons, p_retries, p_attempted)
            WITH ORDINALITY AS v(message_id, id, state, reason, retry, attempted, n)
    ), flagged AS (
        SELECT v.message_id, v.id, f.data FROM unnest(p_event_rows, p_event_data) AS f(n, data)
            JOIN v ON v.n = f.n
    ), before AS (
        -- The copies' states before this statement (its update is not visible here).
        SELECT dl.message_id, dl.device_id, dl.state FROM flagged f
            JOIN deliveries dl ON dl.message_id = f.message_id AND dl.device_id = f.id
    ), recorded AS (
        UPDATE deliveries dl SET state = v.state, apns_reason = NULLIF(v.reason, ''),
            next_attempt_at = CASE WHEN v.retry > 'epoch'::timestamptz THEN v.retry END,
            apns_attempts = dl.apns_attempts + v.attempted, routed_at = now()
        FROM v
        WHERE dl.message_id = v.message_id AND dl.device_id = v.id AND dl.state IN ('pending', 'waiting')
        RETURNING dl.message_id, dl.device_id, dl.state, dl.inbox_seq, dl.apns_reason
    ), finished AS (
        DELETE FROM push_jobs WHERE id = ANY(p_jobs) RETURNING message_id, kind
    ), fanned AS (
        UPDATE messages SET fanned_out_at = now()
        WHERE id = ANY(ARRAY(SELECT message_id FROM finished WHERE kind = 'push')) AND fanned_out_at IS NULL
    ), happened AS (
        SELECT m.app_id, t.type, r.message_id, m.msg_id, r.device_id, d.registration_id, t.data
        FROM recorded r
            JOIN flagged f ON f.message_id = r.message_id AND f.id = r.device_id
            JOIN before b ON b.message_id = r.message_id AND b.device_id = r.device_id
            JOIN messages m ON m.id = r.message_id
            JOIN devices d ON d.id = r.device_id
            CROSS JOIN LATERAL (VALUES
                ('stored', b.state = 'pending' AND r.inbox_seq IS NOT NULL, jsonb_build_object('inbox_seq', r.inbox_seq)),
                ('sent_tcp', r.state = 'tcp' OR (f.data->>'sent_tcp')::boolean IS TRUE,
                    jsonb_build_object('channel', 'mqtt', 'inbox_seq', r.inbox_seq)),
                ('acknowledged', r.state = 'tcp', jsonb_build_object('channel', 'mqtt', 'inbox_seq', r.inbox_seq)),
                ('sent_apns', r.state = 'apns', jsonb_build_object('channel', 'apns') || (f.data - 'sent_tcp')),
                ('failed', r.state = 'failed',
                    jsonb_build_object('reason', r.apns_reason, 'channel', 'apns') || (f.data - 'sent_tcp')),
                ('expired', r.state = 'expired', jsonb_build_object('reason', r.apns_reason))
            ) AS t(type, happened, data)
        WHERE t.happened
    ), recorded_events AS (
        INSERT INTO events (app_id, type, message_id, msg_id, device_id, registration_id, data)
        SELECT app_id, type, message_id, msg_id, device_id, registration_id, jsonb_strip_nulls(data) FROM happened
        ORDER BY message_id, device_id
        RETURNING type, message_id, msg_id, registration_id, at, data
    )
    INSERT INTO callback_outbox (app_id, url, body)
    SELECT c.app_id, c.url, herald_callback_body(e.type, e.msg_id, e.registration_id, e.at, e.data, c.params)
    FROM recorded_events e JOIN message_callbacks c ON c.message_id = e.message_id
    WHERE c.type & herald_callback_bit(e.type) <> 0;
END
$$;
