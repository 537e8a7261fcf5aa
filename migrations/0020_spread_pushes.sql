-- Pushes spread over time (JPush's `options.big_push_duration`, minutes). Their job is
-- fanned out batch by batch as for any large push, but between batches it is parked:
-- given back with `available_at` at the moment its next batch is due, so no worker waits
-- on it and any node takes it up then. Its pace comes from the audience counted when it
-- started (`spread_total`) and the copies made so far (`spread_done`): batch k is due at
-- created_at + duration × done / total, so the copies go out evenly over the duration
-- whichever nodes make them.
ALTER TABLE push_jobs ADD COLUMN spread_total integer;
ALTER TABLE push_jobs ADD COLUMN spread_done integer NOT NULL DEFAULT 0;
