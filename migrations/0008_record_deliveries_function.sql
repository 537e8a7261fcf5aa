-- Recording the routed copies of a batch of pushes and finishing their jobs is the push
-- path's second statement, sent for every group of pushes the center routes. Sent as SQL
-- text, PostgreSQL parsed and planned it on every call (planning alone was about 3 µs a
-- push). As a prepared statement its plan would be made once, but a generic plan made
-- while the tables are small scans them whole, and stays in use as they grow (measured:
-- 3.5 ms a call instead of 0.24).
--
-- This function keeps one plan per connection, as PL/pgSQL does, and can't get that bad
-- plan: while it runs, the planner may not scan a table whole or hash or merge-join it,
-- so every row is reached through its primary key. Its statements are those it replaced.
CREATE FUNCTION herald_record_deliveries(
    p_messages bigint[], p_devices bigint[], p_states text[], p_reasons text[],
    p_retries timestamptz[], p_attempted integer[], p_jobs bigint[]
) RETURNS void LANGUAGE plpgsql
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off AS $$
BEGIN
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
    WHERE id IN (SELECT message_id FROM finished WHERE kind = 'push') AND fanned_out_at IS NULL;
END
$$;
