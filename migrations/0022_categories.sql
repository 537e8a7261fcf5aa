-- Notification categories an operator defines on the server (`/v3/categories`, issue #20):
-- the action buttons and routes a push naming one carries as `notification_config`.
--
-- `version` starts at 1 and grows by one on every update: a push carries the version it
-- was accepted with (rendered into the stored message, so a later change never alters an
-- accepted push), and devices report the version they hold.
CREATE TABLE notification_categories (
    app_id                 bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    identifier             text NOT NULL,
    version                bigint NOT NULL DEFAULT 1 CHECK (version > 0),
    -- The category as defined (NotificationCategory), its keys as the API takes them.
    definition             jsonb NOT NULL,
    created_at             timestamptz NOT NULL DEFAULT now(),
    updated_at             timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, identifier)
);

-- The configuration version each device says it holds (the SDK's `category_version`
-- event). Kept after the category is deleted only until the device is: a category
-- defined again starts its count afresh (its rows are deleted with it).
CREATE TABLE category_device_versions (
    app_id                 bigint NOT NULL,
    identifier             text NOT NULL,
    device_id              bigint NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    version                bigint NOT NULL,
    reported_at            timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, identifier, device_id),
    FOREIGN KEY (app_id, identifier) REFERENCES notification_categories (app_id, identifier) ON DELETE CASCADE
);
CREATE INDEX category_device_versions_device ON category_device_versions (device_id);

-- The device's language (BCP 47, `zh-Hans-CN`), reported at registration: it chooses a
-- push's `notification.ios.localizations` entry.
ALTER TABLE devices ADD COLUMN language text;
