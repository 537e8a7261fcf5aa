-- Quiet hours and a daily cap per app, in each device's local time, for operations pushes
-- (JPush's `classification` 0, the default; system pushes, 1, are exempt).
--
-- Local time is the device's `time_zone` (migration 0017), else the app's.
ALTER TABLE apps ADD COLUMN quiet_hours_start time;
ALTER TABLE apps ADD COLUMN quiet_hours_end time;
ALTER TABLE apps ADD COLUMN quiet_hours_action text CHECK (quiet_hours_action IN ('hold', 'drop'));
ALTER TABLE apps ADD COLUMN daily_cap integer CHECK (daily_cap > 0);

-- Operations pushes each device got per local day, for the daily cap. Written only for
-- apps with a cap; old days are purged with the messages.
CREATE TABLE device_daily_pushes (
    device_id              bigint NOT NULL,
    day                    date NOT NULL,
    pushes                 integer NOT NULL,
    PRIMARY KEY (device_id, day)
);

-- New delivery states (the column has no CHECK; see migration 0003):
--   held      inside the device's quiet hours: not in its inbox yet; released into it at
--             `next_attempt_at`, the window's end (state `pending` then)
--   dropped   not sent: `apns_reason` says why (`QuietHours`, `DailyCap`)
CREATE INDEX deliveries_held ON deliveries (next_attempt_at) WHERE state = 'held';

-- The first of `p_device` and `p_app` that PostgreSQL knows as a time zone, else UTC: a
-- device's zone is checked when it registers, but by Foundation's list, which is not
-- PostgreSQL's, and a fan-out must not fail on one device's zone.
CREATE OR REPLACE FUNCTION herald_zone(p_device text, p_app text) RETURNS text LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF p_device IS NOT NULL THEN
        BEGIN
            PERFORM now() AT TIME ZONE p_device;
            RETURN p_device;
        EXCEPTION WHEN invalid_parameter_value THEN
            NULL;
        END;
    END IF;
    IF p_app IS NOT NULL THEN
        BEGIN
            PERFORM now() AT TIME ZONE p_app;
            RETURN p_app;
        EXCEPTION WHEN invalid_parameter_value THEN
            NULL;
        END;
    END IF;
    RETURN 'UTC';
END
$$;
