-- herald_record_deliveries (migration 0008) kept one plan per connection. Its settings
-- forbade whole-table scans, but not a whole-index scan: planned while `deliveries` and
-- `messages` held a few rows (a new install, or a table that grew fast since its last
-- ANALYZE), it read the whole `deliveries_device` index on every call and filtered it, and
-- the whole `messages_pkey` index the same way, so each call cost more as the tables grew.
-- Seen with auto_explain in `herald-bench cluster` (one node, unicast at 1,000/s for 10 s):
-- 10,299 rows read and dropped to update 1; the statement ran 4.7 s of the 10.
--
-- Now it is planned on each call, for the tables as they are then (`plan_cache_mode`:
-- about 0.14 ms a call), and its lookups are index conditions whatever the statistics say:
-- the messages by `id = ANY(ARRAY(...))`, and the deliveries by a nested loop that may not
-- materialize its inner side. Same run: 0.5 s of execution and 1.0 s of planning instead
-- of 4.7 s; receipt p50 / p99 2.8 / 10.2 ms instead of 5.2 / 21.0.
CREATE OR REPLACE FUNCTION herald_record_deliveries(
    p_messages bigint[], p_devices bigint[], p_states text[], p_reasons text[],
    p_retries timestamptz[], p_attempted integer[], p_jobs bigint[]
) RETURNS void LANGUAGE plpgsql
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET enable_material = off
SET plan_cache_mode = force_custom_plan AS $$
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
    WHERE id = ANY(ARRAY(SELECT message_id FROM finished WHERE kind = 'push')) AND fanned_out_at IS NULL;
END
$$;
