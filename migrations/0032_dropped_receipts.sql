-- A device's SDK reports what it could not use (a `dropped` receipt): a payload it could
-- not read, a category that doesn't parse. The first report counts, with its reason.
ALTER TABLE deliveries
    ADD COLUMN dropped_at timestamptz,
    ADD COLUMN dropped_reason text;
