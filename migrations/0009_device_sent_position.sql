-- "Sent through": the highest inbox seq a device's connections have sent it, kept beside
-- "acknowledged through" and written with it, in the same batches. Stored messages go out
-- in seq order, so a copy replayed on a later connection whose seq is at or below it was
-- sent before, and is sent again with the MQTT DUP flag; one above it, never sent, without.
-- Like acknowledgements it is written without waiting for the flush: a crash of the
-- database can lose the last of it, and a copy sent just before then comes again without DUP.
ALTER TABLE device_acks ADD COLUMN sent_seq bigint NOT NULL DEFAULT 0;
