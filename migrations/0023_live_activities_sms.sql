-- ActivityKit tokens of iOS devices, for Live Activity pushes (`live_activity`).
--
--   kind 'start'   the device's push-to-start token for one attributes type (`key`);
--                  a `live_activity.ios.event` "start" goes to it
--   kind 'update'  the update token of one running activity (`key` = its
--                  `live_activity_id`); "update" and "end" go to it
--
-- The device registers and removes them through
-- `/v3/devices/{registration_id}/live_activities/...`; they go with the device. APNs
-- takes them in the device's `apns_environment`.
CREATE TABLE live_activity_tokens (
    device_id              bigint NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    app_id                 bigint NOT NULL,
    kind                   text NOT NULL CHECK (kind IN ('start', 'update')),
    key                    text NOT NULL,
    token                  text NOT NULL,
    updated_at             timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (device_id, kind, key)
);

-- An update or end finds its activity's devices by app and id.
CREATE INDEX live_activity_tokens_by_key ON live_activity_tokens (app_id, kind, key);
