-- A copy's events in the order they happened. A device may report that it opened a
-- message before its acknowledgement, or the center's record of the copy's delivery, is
-- written (both are written in batches): the `opened` event then came before
-- `sent_tcp` / `acknowledged` in the event log, the timeline, the stream and webhooks.
-- Now `opened` is written by whichever writes last: the report itself when the copy's
-- `acknowledged` or `sent_apns` event is already there (CenterStore.markOpened), else the
-- writer of that event, after it (herald_record_deliveries below, and the acknowledgement
-- batch, GatewayStore.recordAcks). The events one call of herald_record_deliveries writes
-- for a copy are also inserted in their order now (they were sorted by copy only).
--
-- herald_record_deliveries as in migration 0018, with the `opened` row and the order.
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
                (5, 'failed', r.state = 'failed',
                    jsonb_build_object('reason', r.apns_reason, 'channel', 'apns') || (f.data - 'sent_tcp')),
                (6, 'expired', r.state = 'expired', jsonb_build_object('reason', r.apns_reason)),
                -- Reported before its outcome was recorded: written after it.
                (7, 'opened', r.state IN ('tcp', 'apns') AND r.opened_at IS NOT NULL
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
