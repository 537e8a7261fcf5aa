-- Apps: one per mobile app an operator pushes to.
CREATE TABLE apps (
    id                     bigserial PRIMARY KEY,
    app_key                text NOT NULL UNIQUE,
    name                   text NOT NULL,
    master_secret_hash     bytea NOT NULL,
    created_at             timestamptz NOT NULL DEFAULT now(),
    -- APNs credentials, sealed with AES-256-GCM under the key-encryption key.
    apns_credentials       bytea,
    apns_credentials_key   text,
    apns_summary           jsonb,
    apns_updated_at        timestamptz
);

-- Devices: one row per app installation.
CREATE TABLE devices (
    id                     bigserial PRIMARY KEY,
    app_id                 bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    registration_id        text NOT NULL UNIQUE,
    platform               text NOT NULL,
    secret_hash            bytea NOT NULL,
    apns_token             text,
    apns_environment       text CHECK (apns_environment IN ('production', 'sandbox')),
    voip_token             text,
    -- false once APNs says the token is unregistered or bad; true again on re-registration.
    token_valid            boolean NOT NULL DEFAULT true,
    token_invalidated_at   timestamptz,
    alias                  text,
    created_at             timestamptz NOT NULL DEFAULT now(),
    updated_at             timestamptz NOT NULL DEFAULT now()
);

-- Registering the same token again finds the same device.
CREATE UNIQUE INDEX devices_app_apns_token ON devices (app_id, apns_token) WHERE apns_token IS NOT NULL;
CREATE UNIQUE INDEX devices_app_voip_token ON devices (app_id, voip_token) WHERE voip_token IS NOT NULL;
-- Alias lookups and "all devices of an app" in id order (batched fan-out).
CREATE INDEX devices_app_alias ON devices (app_id, alias) WHERE alias IS NOT NULL;
CREATE INDEX devices_app_id ON devices (app_id, id);

-- Tags: the primary key serves "devices with tag X" as an index range in device order,
-- so AND (intersect), OR (union) and NOT (anti-join) over tags are merge-friendly scans.
CREATE TABLE device_tags (
    app_id                 bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    tag                    text NOT NULL,
    device_id              bigint NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    PRIMARY KEY (app_id, tag, device_id)
);
-- A device's own tags (GET device, the per-device limit, cascade deletes).
CREATE INDEX device_tags_device ON device_tags (device_id);
