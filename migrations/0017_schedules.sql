-- Schedules (`/v3/schedules`, JPush's shape) and delivery in each device's local time.
-- Every change to an existing table adds a column with no default, or a constant one:
-- catalogue only, no table rewrite.

-- The zone an app's schedule times are read in, when a schedule names none (JPush reads
-- them in Beijing time; Herald in UTC unless the app says otherwise).
ALTER TABLE apps ADD COLUMN time_zone text NOT NULL DEFAULT 'UTC';

-- The IANA zone a device reported (registration, device update); NULL when it reported
-- none. A local-time schedule fires once per zone its app's devices are in; this index
-- finds those zones without reading every device (a loose index scan).
ALTER TABLE devices ADD COLUMN time_zone text;
CREATE INDEX devices_app_time_zone ON devices (app_id, time_zone) WHERE time_zone IS NOT NULL;

-- A message made by a local-time schedule is for the devices of its audience in one zone:
-- those whose zone is `audience_time_zone`, counting a device with no zone as in
-- `audience_default_zone`. NULL on every other message: the audience is as the push says.
ALTER TABLE messages ADD COLUMN audience_time_zone text;
ALTER TABLE messages ADD COLUMN audience_default_zone text;

CREATE TABLE schedules (
    id                     bigserial PRIMARY KEY,
    schedule_id            uuid NOT NULL UNIQUE,
    app_id                 bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    -- The client's idempotency key (JPush's cid): creating with it again answers the
    -- schedule made first.
    cid                    text,
    name                   text NOT NULL,
    enabled                boolean NOT NULL,
    -- JPush's trigger object, normalised (ScheduleTrigger.json).
    trigger                json NOT NULL,
    -- The push, stored as a push's request is (PushRequest.storedJSON), without a cid.
    push                   json NOT NULL,
    -- The zone of the trigger's times; NULL: the app's.
    time_zone              text,
    -- Fire at the trigger's wall time in each device's zone.
    local_time             boolean NOT NULL DEFAULT false,
    -- Every occurrence due at or before this instant was fired or recorded missed.
    evaluated_until        timestamptz NOT NULL,
    -- When a scheduler evaluates the schedule next (ScheduleEvaluation); NULL once it has
    -- finished (its last occurrence passed).
    next_fire_at           timestamptz,
    finished_at            timestamptz,
    created_at             timestamptz NOT NULL DEFAULT now(),
    updated_at             timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX schedules_app_cid ON schedules (app_id, cid) WHERE cid IS NOT NULL;
CREATE INDEX schedules_app ON schedules (app_id, created_at, id);
-- What the schedulers claim, earliest first, FOR UPDATE SKIP LOCKED.
CREATE INDEX schedules_due ON schedules (next_fire_at) WHERE enabled AND next_fire_at IS NOT NULL;

-- What each occurrence of a schedule became, written in the transaction that accepted its
-- push: the key makes a second firing of one occurrence (in one zone) impossible.
--   sent    its push was accepted as msg_id
--   missed  it was due while no scheduler ran, beyond the grace (or a later one was due)
--   failed  its push was refused when it came due (error_code, error_message: no device
--           matched, the app's state)
CREATE TABLE schedule_runs (
    schedule_id            bigint NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
    occurrence             timestamptz NOT NULL,
    -- The devices' zone of a local-time schedule's run; '' otherwise.
    time_zone              text NOT NULL DEFAULT '',
    state                  text NOT NULL CHECK (state IN ('sent', 'missed', 'failed')),
    msg_id                 text,
    error_code             integer,
    error_message          text,
    fired_at               timestamptz NOT NULL,
    PRIMARY KEY (schedule_id, occurrence, time_zone)
);
