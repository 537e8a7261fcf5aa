/// The one place (beside the record function of migration 0018) where events are written
/// with their callback requests. A statement that records events defines
/// `new_events(app_id, type, message_id, msg_id, device_id, registration_id, data)` first,
/// then embeds ``ctes``: the events are inserted, and for each whose message has a JPush
/// callback asking for its kind (``PushCallback``), a request goes to `callback_outbox`
/// in the same statement, so the two are committed together.
enum EventRows {
    static let ctes = """
        recorded_events AS (
            INSERT INTO events (app_id, type, message_id, msg_id, device_id, registration_id, data)
            SELECT app_id, type, message_id, msg_id, device_id, registration_id, data FROM new_events
            RETURNING type, message_id, msg_id, registration_id, at, data
        ), requested_callbacks AS (
            INSERT INTO callback_outbox (app_id, url, body)
            SELECT c.app_id, c.url, herald_callback_body(e.type, e.msg_id, e.registration_id, e.at, e.data, c.params)
            FROM recorded_events e JOIN message_callbacks c ON c.message_id = e.message_id
            WHERE c.type & herald_callback_bit(e.type) <> 0
        )
        """
}
