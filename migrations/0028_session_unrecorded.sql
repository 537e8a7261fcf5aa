-- A device's next connection sets MQTT DUP on what an earlier connection may have sent.
-- The positions a connection sent through are written in batches (every 100 ms), so a
-- session that ended without its node writing them (the node died, or restarted under the
-- same id) leaves copies that were sent but show as never sent. The sweep that clears
-- such a session marks it `unrecorded`; the next claim reads the mark (its first replay
-- carries DUP) and clears it.
ALTER TABLE device_sessions ADD COLUMN unrecorded boolean NOT NULL DEFAULT false;
