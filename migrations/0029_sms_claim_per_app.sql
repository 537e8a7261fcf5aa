-- SMS are claimed per app, at most a few in flight for each (center SMSSender): one app
-- whose provider hangs then holds only its own share of the sender, never every slot.
-- The claim walks the apps that have SMS waiting (one index probe each) and takes each
-- one's oldest due SMS from this index.
CREATE INDEX sms_outbox_app_due ON sms_outbox (app_id, next_attempt_at) WHERE state IN ('pending', 'sending');
