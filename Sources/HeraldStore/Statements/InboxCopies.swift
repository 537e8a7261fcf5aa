/// The one place where copies of messages are numbered and stored in devices' inboxes.
///
/// Every path that writes copies (acceptance, explicit fan-out, tag fan-out, the gateway's
/// commands) embeds ``ctes`` in its statement, so the rule is written once: the copies'
/// devices are locked in id order (every statement that locks several devices does, so
/// they never deadlock), each device's `inbox_seq` moves once by its number of stored
/// copies, and its copies take the numbers in between in the order of their key.
enum InboxCopies {
    /// Common table expressions, to follow two the statement defines first:
    /// - `copies(k, device_id, stored)`: one row per copy. `k` orders one device's copies
    ///   (smaller first); `stored` is false for a copy that is only routed, never stored
    ///   (time to live 0).
    /// - `contents(k, msg_id, payload, android_payload, expires_at)`: what a stored copy of
    ///   `k` holds; an Android device's copy holds `android_payload` unless it is null or
    ///   empty (the same as `payload`).
    ///
    /// They define `numbered(k, device_id, seq)`: each copy whose device still exists, with
    /// its inbox number (null when not stored). A device deleted meanwhile gets nothing:
    /// rows of the inbox and deliveries carry no foreign key (migration 0005). The lock is
    /// NO KEY UPDATE, as the UPDATE itself takes: rows that only reference a device take
    /// KEY SHARE and don't conflict with it.
    static let ctes = """
        locked AS (
            SELECT d.id, d.platform FROM devices d WHERE d.id IN (SELECT device_id FROM copies) ORDER BY d.id FOR NO KEY UPDATE
        ), counts AS (
            SELECT c.device_id, count(*) AS n FROM copies c JOIN locked l ON l.id = c.device_id WHERE c.stored
            GROUP BY c.device_id
        ), bumped AS (
            UPDATE devices d SET inbox_seq = d.inbox_seq + c.n FROM counts c WHERE d.id = c.device_id
            RETURNING d.id, d.inbox_seq - c.n AS before
        ), numbered AS (
            SELECT c.k, c.device_id,
                   CASE WHEN c.stored THEN
                       b.before + row_number() OVER (PARTITION BY c.device_id, c.stored ORDER BY c.k)
                   END AS seq
            FROM copies c JOIN locked l ON l.id = c.device_id LEFT JOIN bumped b ON b.id = c.device_id AND c.stored
        ), inboxed AS (
            INSERT INTO device_messages (device_id, seq, msg_id, payload, expires_at)
            SELECT n.device_id, n.seq, ct.msg_id,
                   COALESCE(CASE WHEN l.platform = 'android' THEN NULLIF(ct.android_payload, ''::bytea) END, ct.payload), ct.expires_at
            FROM numbered n JOIN contents ct ON ct.k = n.k JOIN locked l ON l.id = n.device_id WHERE n.seq IS NOT NULL
        )
        """
}
