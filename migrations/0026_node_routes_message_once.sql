-- herald_node_routes (migration 0024) read each routed copy's message with it: the
-- message's row, its request and its app's controls, once per copy. A broadcast's route row
-- holds hundreds of copies of one message, so the read looked the message and the app up,
-- and sent the request, hundreds of times (36,000 times for three broadcasts over three
-- nodes), where the holder decodes it once per row.
--
-- Now each route row comes first as a row of its own, with its message and no device,
-- then one row per copy still pending, with its device and no message: the same columns in
-- the same order, which `CenterStore.routes(for:excluding:limit:)` reads as before (a
-- route's message from its first row, a target from every row with a device). The lookups
-- are those of 0024, each through its key.
CREATE OR REPLACE FUNCTION herald_node_routes(p_node text, p_excluding bigint[], p_limit bigint)
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
    WITH r AS MATERIALIZED (
        SELECT nr.id, nr.message_id, nr.device_ids, nr.hops FROM node_routes nr
        WHERE nr.node_id = p_node AND NOT (nr.id = ANY(p_excluding)) ORDER BY nr.id LIMIT p_limit
    )
    SELECT r.id, r.message_id, r.hops,
           NULL::bigint, NULL::text, NULL::text, NULL::text, NULL::text, NULL::text, NULL::boolean, NULL::boolean,
           NULL::bigint, NULL::integer,
           m.id, m.msg_id, m.app_id, m.request::text, m.identifier, m.expires_at, m.created_at,
           m.recalled_at IS NOT NULL, m.superseded_at IS NOT NULL, m.audience_time_zone, m.audience_default_zone,
           EXISTS (SELECT 1 FROM apps a WHERE a.id = m.app_id AND (a.quiet_hours_start IS NOT NULL OR a.daily_cap IS NOT NULL))
    FROM r LEFT JOIN messages m ON m.id = r.message_id
    UNION ALL
    SELECT r.id, r.message_id, r.hops,
           d.id, d.registration_id, d.platform, d.apns_token, d.apns_environment, d.voip_token, d.token_valid,
           d.in_background, dl.inbox_seq, d.badge,
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
