-- The console's dashboard (issue #31): each node's figures every few seconds (the same
-- counters and gauges its /metrics shows), kept for two hours, so any node can draw the
-- whole cluster's last hour.
CREATE TABLE node_samples (
    node_id                text NOT NULL,
    at                     timestamptz NOT NULL,
    connected              bigint NOT NULL,
    accepted               bigint NOT NULL,
    delivered_tcp          bigint NOT NULL,
    delivered_apns         bigint NOT NULL,
    apns_ok                bigint NOT NULL,
    apns_failed            bigint NOT NULL,
    PRIMARY KEY (node_id, at)
);
CREATE INDEX node_samples_at ON node_samples (at);
