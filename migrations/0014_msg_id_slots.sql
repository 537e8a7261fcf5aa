-- Message ids are JPush's shape: a decimal that fits a signed 64-bit integer, ordered by
-- time (Identifiers.msgID, MsgIDLayout): milliseconds, a node slot (0 to 1023) and a
-- sequence. The slot keeps the processes that share this database from making the same
-- id without asking the database for each one: a process leases a slot here on its first
-- id and renews the lease while it makes ids (MessageIDs). A slot whose lease ran out
-- (its process stopped, or stopped renewing) can be leased again.
--
-- Ids made before this migration are 24 hex characters; they stay in `messages.msg_id`
-- and `device_messages.msg_id` as they are, and stay valid wherever an id is accepted.
CREATE TABLE msg_id_slots (
    slot                   integer PRIMARY KEY CHECK (slot >= 0 AND slot < 1024),
    -- A token of the process holding the lease, chosen when it starts.
    holder                 text NOT NULL,
    leased_until           timestamptz NOT NULL,
    -- Above every time part (milliseconds since the id epoch, by the holder's clock) the
    -- holder may use before its lease runs out: the next holder of the slot starts its ids
    -- above it, so two holders never make the same id even if their clocks disagree.
    time_bound             bigint NOT NULL
);
