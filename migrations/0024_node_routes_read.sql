-- The read of the copies routed to a node (`CenterStore.routes(for:excluding:limit:)`,
-- the holder's `NodeRouteWorker`), as a function planned once per connection and only
-- through indexes.
--
-- As one statement sent each time, it was planned on every call (0.41 ms, beside 0.62 ms
-- of running it), and planned for the tables as the statistics last saw them: in a
-- cluster taking unicast pushes at 1,000/s since a few seconds (`herald-bench cluster`,
-- auto_explain), it read `deliveries` whole (a hash join over a sequential scan, 10,274
-- rows dropped to find 13) and `node_routes` by a bitmap scan over 3,456 index entries of
-- rows long deleted (a bitmap scan never marks them dead, an index scan does). The read
-- ran 3,834 times in 10 s across the three nodes: 3.9 s of PostgreSQL's time.
--
-- Here each step is an index lookup whatever the statistics say (no sequential or bitmap
-- scan, no hash, merge or materialized join): the node's oldest rows by
-- `node_routes_node` (node_id, id) in order, then per row each of its copies by the
-- primary key of `deliveries` (message_id, device_id), their devices and its message by
-- theirs. The plan is generic, made once per connection and again when ANALYZE changes a
-- table's statistics: it depends on no value.
--
-- Its columns are, in order, the route's id, message id and hops, `FanOutTarget.columns`
-- with the inbox seq and badge, and `MessageRecord.columns`: the Swift decoders read them
-- by position, so a change to either list changes this function too.
CREATE FUNCTION herald_node_routes(p_node text, p_excluding bigint[], p_limit bigint)
RETURNS TABLE (
    route_id bigint, route_message_id bigint, route_hops integer,
    device_id bigint, registration_id text, platform text, apns_token text, apns_environment text,
    voip_token text, token_valid boolean, in_background boolean, inbox_seq bigint, badge integer,
    message_id bigint, msg_id text, app_id bigint, request text, identifier text,
    expires_at timestamptz, created_at timestamptz, recalled boolean, superseded boolean,
    audience_time_zone text, audience_default_zone text, delivery_controlled boolean
) LANGUAGE plpgsql STABLE
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_hashjoin = off SET enable_mergejoin = off
SET enable_material = off SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    RETURN QUERY
    SELECT r.id, r.message_id, r.hops,
           d.id, d.registration_id, d.platform, d.apns_token, d.apns_environment, d.voip_token, d.token_valid,
           d.in_background, dl.inbox_seq, d.badge,
           m.id, m.msg_id, m.app_id, m.request::text, m.identifier, m.expires_at, m.created_at,
           m.recalled_at IS NOT NULL, m.superseded_at IS NOT NULL, m.audience_time_zone, m.audience_default_zone,
           EXISTS (SELECT 1 FROM apps a WHERE a.id = m.app_id AND (a.quiet_hours_start IS NOT NULL OR a.daily_cap IS NOT NULL))
    FROM (
        SELECT nr.id, nr.message_id, nr.device_ids, nr.hops FROM node_routes nr
        WHERE nr.node_id = p_node AND NOT (nr.id = ANY(p_excluding)) ORDER BY nr.id LIMIT p_limit
    ) r
    LEFT JOIN LATERAL (
        -- Each copy by both columns of the key, its device id taken from the row. The
        -- subquery is kept a subquery (OFFSET 0), so no plan can read the message's copies
        -- and match them to the row's ids: made while `deliveries` was small, one did, and
        -- a broadcast's row of 500 copies read all 10,000 of its message 500 times.
        SELECT u.device_id, c.inbox_seq FROM unnest(r.device_ids) AS u(device_id)
        CROSS JOIN LATERAL (
            SELECT k.inbox_seq FROM deliveries k
            WHERE k.message_id = r.message_id AND k.device_id = u.device_id AND k.state = 'pending'
            OFFSET 0
        ) c
    ) dl ON true
    LEFT JOIN devices d ON d.id = dl.device_id
    LEFT JOIN messages m ON m.id = r.message_id
    ORDER BY r.id, d.id;
END
$$;
