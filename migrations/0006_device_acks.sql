-- "Acknowledged through" moves to a table of its own. On the devices row it had to be
-- written under the same row locks as the fan-out takes to number the inbox (inbox_seq),
-- so every batch of acknowledgements first locked its devices in id order, then updated
-- them: two writes per device, and while it held them (a batch covers hundreds of
-- devices) the pushes to any of those devices waited. Nothing else writes this table.
CREATE TABLE device_acks (
    device_id              bigint PRIMARY KEY,
    acked_seq              bigint NOT NULL
) WITH (fillfactor = 70);

INSERT INTO device_acks (device_id, acked_seq) SELECT id, acked_seq FROM devices WHERE acked_seq > 0;
ALTER TABLE devices DROP COLUMN acked_seq;

-- Deleted with its device, as the device's other rows are (migration 0005).
CREATE OR REPLACE FUNCTION herald_devices_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM device_messages WHERE device_id IN (SELECT id FROM gone);
    DELETE FROM deliveries WHERE device_id IN (SELECT id FROM gone);
    DELETE FROM device_acks WHERE device_id IN (SELECT id FROM gone);
    RETURN NULL;
END
$$;
