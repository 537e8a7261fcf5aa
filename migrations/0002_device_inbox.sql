-- Per-device inbox of messages for the long connection. Every message to a device gets
-- the next number of that device's sequence and is stored before it is sent; the
-- device's acknowledgements advance acked_seq ("acknowledged through"), so replay after a
-- reconnect is "everything after acked_seq that hasn't expired", in order.
ALTER TABLE devices ADD COLUMN inbox_seq bigint NOT NULL DEFAULT 0;
ALTER TABLE devices ADD COLUMN acked_seq bigint NOT NULL DEFAULT 0;

CREATE TABLE device_messages (
    device_id              bigint NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    seq                    bigint NOT NULL,
    message_id             text NOT NULL,
    payload                bytea NOT NULL,
    expires_at             timestamptz NOT NULL,
    created_at             timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (device_id, seq)
);
-- Expired rows are purged by expiry.
CREATE INDEX device_messages_expires ON device_messages (expires_at);

-- Which gateway node holds each device's connection, for routing.
CREATE TABLE device_presence (
    device_id              bigint PRIMARY KEY REFERENCES devices (id) ON DELETE CASCADE,
    node_id                text NOT NULL,
    connected_at           timestamptz NOT NULL DEFAULT now()
);
