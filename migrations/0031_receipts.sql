-- What a device reports about a message after it arrived (HeraldKit's receipts,
-- POST /v3/devices/{registration_id}/receipts): its Notification Service Extension ran
-- (the device got it, not just APNs), it was shown, it was dismissed (a category with
-- customDismissAction). The first report of each counts; `opened` is `opened_at`.
ALTER TABLE deliveries
    ADD COLUMN received_at timestamptz,
    ADD COLUMN displayed_at timestamptz,
    ADD COLUMN dismissed_at timestamptz;

-- The actions of a category tapped on a copy, the first time each.
CREATE TABLE delivery_actions (
    message_id             bigint NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    device_id              bigint NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    action                 text NOT NULL,
    at                     timestamptz NOT NULL,
    PRIMARY KEY (message_id, device_id, action)
);
CREATE INDEX delivery_actions_device ON delivery_actions (device_id);
