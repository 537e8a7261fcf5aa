-- Firebase Cloud Messaging, the first channel behind the planner's seam (issue #32).
--
-- apps: an app's service account, sealed like its APNs credentials (CredentialSealer, the
-- app key as context), what operators see of it, and FCM's refusal (nothing goes to FCM
-- for the app until new credentials are uploaded, which clears it).
ALTER TABLE apps ADD COLUMN fcm_credentials bytea;
ALTER TABLE apps ADD COLUMN fcm_credentials_key text;
ALTER TABLE apps ADD COLUMN fcm_summary jsonb;
ALTER TABLE apps ADD COLUMN fcm_updated_at timestamptz;
ALTER TABLE apps ADD COLUMN fcm_broken_reason text;
ALTER TABLE apps ADD COLUMN fcm_broken_at timestamptz;

-- devices: an Android device's FCM registration token (removed when FCM says it is dead:
-- UNREGISTERED, SENDER_ID_MISMATCH, or an invalid one).
ALTER TABLE devices ADD COLUMN fcm_token text;
CREATE UNIQUE INDEX devices_app_fcm_token ON devices (app_id, fcm_token) WHERE fcm_token IS NOT NULL;

-- deliveries: a copy FCM took is in state 'fcm' (as one APNs took is in 'apns'); its
-- event is `sent_fcm` (channel fcm), a JPush callback's "sent" like `sent_apns`. A copy a
-- channel refused is `failed` with that channel in its event (the copy's event data
-- names it; APNs when it doesn't). The reason column (apns_reason) holds FCM's reason
-- for FCM's copies: it is the channel's reason, whichever channel.
CREATE OR REPLACE FUNCTION herald_callback_bit(p_type text) RETURNS integer LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE p_type WHEN 'acknowledged' THEN 1 WHEN 'opened' THEN 2 WHEN 'sent_tcp' THEN 8 WHEN 'sent_apns' THEN 8
                       WHEN 'sent_fcm' THEN 8 ELSE 0 END
$$;

-- herald_node_routes as in migration 0026, with the device's FCM token after in_background
-- (FanOutTarget.columns: change both together).
DROP FUNCTION herald_node_routes(text, bigint[], bigint);
CREATE FUNCTION herald_node_routes(p_node text, p_excluding bigint[], p_limit bigint)
RETURNS TABLE (
    route_id bigint, route_message_id bigint, route_hops integer,
    device_id bigint, registration_id text, platform text, apns_token text, apns_environment text,
    voip_token text, token_valid boolean, in_background boolean, fcm_token text, inbox_seq bigint, badge integer,
    message_id bigint, msg_id text, app_id bigint, request text, identifier text,
    expires_at timestamptz, created_at timestamptz, recalled boolean, superseded boolean,
    audience_time_zone text, audience_default_zone text, delivery_controlled boolean
) LANGUAGE plpgsql STABLE
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_hashjoin = off SET enable_mergejoin = off
SET enable_material = off SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    RETURN QUERY
    WITH r AS MATERIALIZED (
        SELECT nr.id, nr.message_id, nr.device_ids, nr.hops FROM node_routes nr
        WHERE nr.node_id = p_node AND NOT (nr.id = ANY(p_excluding)) ORDER BY nr.id LIMIT p_limit
    )
    SELECT r.id, r.message_id, r.hops,
           NULL::bigint, NULL::text, NULL::text, NULL::text, NULL::text, NULL::text, NULL::boolean, NULL::boolean, NULL::text,
           NULL::bigint, NULL::integer,
           m.id, m.msg_id, m.app_id, m.request::text, m.identifier, m.expires_at, m.created_at,
           m.recalled_at IS NOT NULL, m.superseded_at IS NOT NULL, m.audience_time_zone, m.audience_default_zone,
           EXISTS (SELECT 1 FROM apps a WHERE a.id = m.app_id AND (a.quiet_hours_start IS NOT NULL OR a.daily_cap IS NOT NULL))
    FROM r LEFT JOIN messages m ON m.id = r.message_id
    UNION ALL
    SELECT r.id, r.message_id, r.hops,
           d.id, d.registration_id, d.platform, d.apns_token, d.apns_environment, d.voip_token, d.token_valid,
           d.in_background, d.fcm_token, dl.inbox_seq, d.badge,
           NULL::bigint, NULL::text, NULL::bigint, NULL::text, NULL::text, NULL::timestamptz, NULL::timestamptz,
           NULL::boolean, NULL::boolean, NULL::text, NULL::text, NULL::boolean
    FROM r
    CROSS JOIN LATERAL (
        -- Each copy by both columns of the key, kept a subquery (OFFSET 0): see 0024.
        SELECT u.device_id, c.inbox_seq FROM unnest(r.device_ids) AS u(device_id)
        CROSS JOIN LATERAL (
            SELECT k.inbox_seq FROM deliveries k
            WHERE k.message_id = r.message_id AND k.device_id = u.device_id AND k.state = 'pending'
            OFFSET 0
        ) c
    ) dl
    JOIN devices d ON d.id = dl.device_id
    -- A route's own row first (no device), then its copies in device order.
    ORDER BY 1, 4 NULLS FIRST;
END
$$;

-- herald_record_deliveries as in migration 0030, with `sent_fcm` and FCM's copies opened.
CREATE OR REPLACE FUNCTION herald_record_deliveries(
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
        RETURNING dl.message_id, dl.device_id, dl.state, dl.inbox_seq, dl.apns_reason, dl.opened_at
    ), finished AS (
        DELETE FROM push_jobs WHERE id = ANY(p_jobs) RETURNING message_id, kind
    ), fanned AS (
        UPDATE messages SET fanned_out_at = now()
        WHERE id = ANY(ARRAY(SELECT message_id FROM finished WHERE kind = 'push')) AND fanned_out_at IS NULL
    ), happened AS (
        SELECT m.app_id, t.type, r.message_id, m.msg_id, r.device_id, d.registration_id, t.data, t.ord
        FROM recorded r
            JOIN flagged f ON f.message_id = r.message_id AND f.id = r.device_id
            JOIN before b ON b.message_id = r.message_id AND b.device_id = r.device_id
            JOIN messages m ON m.id = r.message_id
            JOIN devices d ON d.id = r.device_id
            CROSS JOIN LATERAL (VALUES
                (1, 'stored', b.state = 'pending' AND r.inbox_seq IS NOT NULL, jsonb_build_object('inbox_seq', r.inbox_seq)),
                (2, 'sent_tcp', r.state = 'tcp' OR (f.data->>'sent_tcp')::boolean IS TRUE,
                    jsonb_build_object('channel', 'mqtt', 'inbox_seq', r.inbox_seq)),
                (3, 'acknowledged', r.state = 'tcp', jsonb_build_object('channel', 'mqtt', 'inbox_seq', r.inbox_seq)),
                (4, 'sent_apns', r.state = 'apns', jsonb_build_object('channel', 'apns') || (f.data - 'sent_tcp')),
                (4, 'sent_fcm', r.state = 'fcm', jsonb_build_object('channel', 'fcm') || (f.data - 'sent_tcp')),
                -- The channel that refused it: APNs unless the copy's data names another.
                (5, 'failed', r.state = 'failed',
                    jsonb_build_object('reason', r.apns_reason, 'channel', 'apns') || (f.data - 'sent_tcp')),
                (6, 'expired', r.state = 'expired', jsonb_build_object('reason', r.apns_reason)),
                -- Reported before its outcome was recorded: written after it.
                (7, 'opened', r.state IN ('tcp', 'apns', 'fcm') AND r.opened_at IS NOT NULL
                    AND NOT EXISTS (SELECT 1 FROM events e
                                    WHERE e.message_id = r.message_id AND e.device_id = r.device_id AND e.type = 'opened'),
                    '{}'::jsonb)
            ) AS t(ord, type, happened, data)
        WHERE t.happened
    ), recorded_events AS (
        INSERT INTO events (app_id, type, message_id, msg_id, device_id, registration_id, data)
        SELECT app_id, type, message_id, msg_id, device_id, registration_id, jsonb_strip_nulls(data) FROM happened
        ORDER BY message_id, device_id, ord
        RETURNING type, message_id, msg_id, registration_id, at, data
    )
    INSERT INTO callback_outbox (app_id, url, body)
    SELECT c.app_id, c.url, herald_callback_body(e.type, e.msg_id, e.registration_id, e.at, e.data, c.params)
    FROM recorded_events e JOIN message_callbacks c ON c.message_id = e.message_id
    WHERE c.type & herald_callback_bit(e.type) <> 0;
END
$$;
