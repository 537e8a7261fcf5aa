-- Several nodes on one database. Each node registers itself and heartbeats; one that stops
-- is declared dead by another after `cluster.deadAfter` and its rows below are cleared
-- or handed over. Node ids are unique per process start (host name and a boot suffix), so
-- a restarted node is a new node.
CREATE TABLE nodes (
    node_id                text PRIMARY KEY,
    started_at             timestamptz NOT NULL DEFAULT now(),
    heartbeat_at           timestamptz NOT NULL DEFAULT now(),
    -- Set when the node began to drain (SIGTERM): it takes no new devices or jobs.
    draining_at            timestamptz,
    mqtt_address           text,
    http_address           text
);

-- Which node holds each device's MQTT connection, fenced by the session's epoch: a
-- connection claims the device by bumping `epoch` (the row lock is the per-device lock),
-- and whatever a connection writes later (its disconnect, its acknowledgements) names its
-- epoch and changes nothing once a newer connection has claimed the device. `node_id` is
-- null while the device is offline; `last_seen_at` is when it was last online.
-- Written on every connect and disconnect: no foreign key (migration 0005), deleted with
-- its device by the trigger below.
CREATE TABLE device_sessions (
    device_id              bigint PRIMARY KEY,
    epoch                  bigint NOT NULL,
    node_id                text,
    connected_at           timestamptz NOT NULL DEFAULT now(),
    last_seen_at           timestamptz NOT NULL DEFAULT now()
) WITH (fillfactor = 70);
CREATE INDEX device_sessions_node ON device_sessions (node_id) WHERE node_id IS NOT NULL;

-- Copies routed to the node that holds their devices: one row per message and node for a
-- batch, not one per copy. The node sends them (acknowledgement timeout, APNs fallback)
-- and deletes the row; a dead node's rows are handed to the node that declared it dead.
-- The copies themselves stay `pending` in `deliveries` until then.
CREATE TABLE node_routes (
    id                     bigserial PRIMARY KEY,
    node_id                text NOT NULL,
    message_id             bigint NOT NULL,
    device_ids             bigint[] NOT NULL,
    -- How many nodes the copies went through (a device that moved again is followed a
    -- few times, then left to the inbox and APNs).
    hops                   integer NOT NULL DEFAULT 1,
    created_at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX node_routes_node ON node_routes (node_id, id);

-- Work that runs on one node of the cluster at a time (purges): a lease by name.
CREATE TABLE cluster_tasks (
    name                   text PRIMARY KEY,
    holder                 text NOT NULL,
    leased_until           timestamptz NOT NULL
);

CREATE OR REPLACE FUNCTION herald_devices_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM device_messages WHERE device_id IN (SELECT id FROM gone);
    DELETE FROM deliveries WHERE device_id IN (SELECT id FROM gone);
    DELETE FROM device_acks WHERE device_id IN (SELECT id FROM gone);
    DELETE FROM device_sessions WHERE device_id IN (SELECT id FROM gone);
    RETURN NULL;
END
$$;
