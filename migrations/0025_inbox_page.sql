-- A page of a device's inbox (`GatewayStore.pendingInbox`): what a connection reads when
-- it starts, and again whenever a message arrives past a gap in its seqs, as one function
-- planned once per connection and only through the keys of the device's rows.
--
-- It was two statements, each planned on every call: 0.15 and 0.12 ms of planning beside
-- 0.05 and 0.02 ms of running. Three broadcasts sent together through three nodes
-- (`herald-bench cluster --phases broadcast`, pg_stat_statements with track_planning) made
-- 2,000 such pages, because a node gets its own broadcast's copy of a device before
-- another node's earlier one: 0.54 s of planning and 0.14 s of running. Every connection
-- of a connect storm reads one too.
--
-- Each lookup is by the device's key whatever the statistics say: the inbox by its
-- primary key (device_id, seq), the device and its acknowledgements by theirs, and its
-- deliveries by `deliveries_device`, only when some of its copies expired. The expiry
-- tests add an interval so that `device_messages_expires` can't serve them: a generic plan
-- made on an empty table could otherwise read every device's expired rows there.
--
-- Copies that expired before the device came back are marked expired in their delivery
-- rows and removed from the inbox first; then one statement reads the device's latest seq
-- and up to p_limit messages after p_after, oldest first, from one snapshot (a message
-- committed between two reads would otherwise look covered but be missing). No row: no
-- such device.
CREATE FUNCTION herald_inbox_page(p_device bigint, p_after bigint, p_limit bigint, p_now timestamptz)
RETURNS TABLE (inbox_seq bigint, seq bigint, msg_id text, payload bytea, expires_at timestamptz, sent boolean)
LANGUAGE plpgsql VOLATILE
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_hashjoin = off SET enable_mergejoin = off
SET enable_material = off SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
    v_expired bigint[];
BEGIN
    WITH expired AS (
        DELETE FROM device_messages m
        WHERE m.device_id = p_device AND m.expires_at + interval '0' <= p_now AND m.seq > p_after
          AND m.seq > COALESCE((SELECT a.acked_seq FROM device_acks a WHERE a.device_id = p_device), 0)
        RETURNING m.seq
    )
    SELECT array_agg(e.seq) INTO v_expired FROM expired e;
    -- Most pages expire nothing, and then read none of the device's deliveries.
    IF v_expired IS NOT NULL THEN
        UPDATE deliveries dl SET state = 'expired', next_attempt_at = NULL
        WHERE dl.device_id = p_device AND dl.inbox_seq = ANY(v_expired) AND dl.state IN ('pending', 'waiting');
    END IF;

    RETURN QUERY
    SELECT d.inbox_seq, m.seq, m.msg_id, m.payload, m.expires_at, m.seq <= COALESCE(a.sent_seq, 0)
    FROM devices d
    LEFT JOIN device_acks a ON a.device_id = d.id
    LEFT JOIN LATERAL (
        SELECT k.seq, k.msg_id, k.payload, k.expires_at FROM device_messages k
        WHERE k.device_id = d.id AND k.seq > GREATEST(COALESCE(a.acked_seq, 0), p_after) AND k.expires_at + interval '0' > p_now
        ORDER BY k.seq LIMIT p_limit
    ) m ON true
    WHERE d.id = p_device;
END
$$;
