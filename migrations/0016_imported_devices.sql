-- Devices imported from JPush (POST /admin/v1/apps/{app_key}/devices/import) keep their
-- JPush registration ids and have no device secret: no installation has been told one.
-- The first registration that names such a device (POST /v3/devices with Basic
-- `registration_id:` and an empty secret) claims it and is issued a secret; until then a
-- NULL secret authenticates nothing, over HTTP or MQTT. Both changes only touch the
-- catalogue: no table rewrite.
ALTER TABLE devices ALTER COLUMN secret_hash DROP NOT NULL;

-- The mobile number JPush held for the device, kept from the import for a later binding
-- of devices to numbers. NULL when unknown.
ALTER TABLE devices ADD COLUMN mobile text;
