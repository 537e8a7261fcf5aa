import Foundation
import HeraldCore
import HeraldTestSupport
import PostgresNIO
import Testing

@testable import HeraldStore

/// The migrations' SQL functions and triggers, called by name, each for what it promises:
/// the zone rule of quiet hours, the request's SMS fields, a JPush callback's body, the
/// rate limit's bucket, a device's inbox page, the audit log's append-only guard, and what
/// deleting an app, a message or a device takes with it. (`herald_callback_bit` is called
/// by name in `FCMStoreTests`; `herald_node_routes` is read through `CenterStore.peers` in
/// `PeerRoutingTests`.) `herald_record_deliveries`, the deliveries' one writer, is called
/// by name here, and through `CenterStore.recordDeliveries` by every center suite.
@Suite struct SQLFunctionTests {
    @Test func theZoneIsTheDevicesThenTheAppsThenUTCWhicheverPostgreSQLKnows() async throws {
        try await TestDatabase.withStore { store in
            let cases: [(device: String?, app: String?, zone: String)] = [
                ("Asia/Shanghai", "Europe/Berlin", "Asia/Shanghai"),
                ("Mars/Olympus", "Europe/Berlin", "Europe/Berlin"),
                (nil, "Europe/Berlin", "Europe/Berlin"),
                ("Mars/Olympus", "Moon/Base", "UTC"),
                (nil, nil, "UTC"),
            ]
            for (device, app, zone) in cases {
                let rows = try await store.sql.query("SELECT herald_zone(\(device), \(app))")
                for try await found in rows.decode(String.self) {
                    #expect(found == zone, "\(String(describing: device)), \(String(describing: app))")
                }
            }
        }
    }

    @Test func theRequestsSMSDelayAndMessageAreReadOrNull() async throws {
        try await TestDatabase.withStore { store in
            let cases: [(request: String, delay: Int?, hasMessage: Bool)] = [
                (#"{"sms_message": {"content": "Hi", "delay_time": 900}}"#, 900, true),
                (#"{"sms_message": {"content": "Hi", "delay_time": "soon"}}"#, nil, true),
                (#"{"sms_message": {"content": "Hi"}}"#, nil, true),
                (#"{"notification": {"alert": "Hi"}}"#, nil, false),
            ]
            for (request, delay, hasMessage) in cases {
                let rows = try await store.sql.query("SELECT herald_sms_delay(\(request)::json), herald_sms_message(\(request)::json)")
                for try await (foundDelay, message) in rows.decode((Int32?, String?).self) {
                    #expect(foundDelay.map(Int.init) == delay, "\(request)")
                    #expect((message != nil) == hasMessage, "\(request)")
                    if let message { #expect(message.contains(#""content": "Hi""#) || message.contains(#""content":"Hi""#), "\(message)") }
                }
            }
        }
    }

    @Test func aCallbackBodyIsJPushsShapeForEachEvent() async throws {
        try await TestDatabase.withStore { store in
            let at = Date(timeIntervalSince1970: 1_764_460_800.5)
            // JPush's callback types: 1 received, 2 clicked, 8 sent (whichever channel).
            let cases: [(type: String, bit: Int, status: String)] = [
                ("acknowledged", 1, "received"), ("opened", 2, "clicked"), ("sent_tcp", 8, "sent"), ("sent_apns", 8, "sent"),
                ("sent_fcm", 8, "sent"),
            ]
            for (type, bit, status) in cases {
                let rows = try await store.sql.query(
                    """
                    SELECT herald_callback_body(\(type), 'm1', 'r1', \(at), '{"channel": "fcm"}'::jsonb, '{"k": "v"}'::json)
                    """
                )
                for try await text in rows.decode(String.self) {
                    let body = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
                    #expect(body["msg_id"] as? String == "m1")
                    #expect(body["registration_id"] as? String == "r1")
                    #expect(body["type"] as? Int == bit, "\(type): \(text)")
                    #expect(body["status"] as? String == status, "\(type): \(text)")
                    #expect(body["event"] as? String == type)
                    #expect(body["channel"] as? String == "fcm")
                    #expect(body["timestamp"] as? Int == 1_764_460_800_500)
                    #expect((body["params"] as? [String: String]) == ["k": "v"])
                }
            }
        }
    }

    /// In one transaction `now()` stands still, so the bucket refills nothing between calls.
    @Test func theRateBucketGrantsWhatItHoldsTakesBackWhatWasReturnedAndIsCappedAtItsRate() async throws {
        try await TestDatabase.withStore { store in
            let app = try await store.api.createApp(name: "Limited")
            try await store.sql.withConnection { connection in
                try await connection.query("BEGIN", logger: TestDatabase.logger)
                func take(_ want: Int, returned: Int = 0) async throws -> (granted: Int, remaining: Double) {
                    let rows = try await connection.query(
                        "SELECT granted, remaining FROM herald_take_rate_tokens(\(app.app.id), 60, \(Int32(want)), \(Int32(returned)))",
                        logger: TestDatabase.logger
                    )
                    for try await (granted, remaining) in rows.decode((Int32, Double).self) { return (Int(granted), remaining) }
                    throw WaitTimedOut(description: "no row")
                }
                // A new bucket is full: 60.
                #expect(try await take(10) == (10, 50))
                #expect(try await take(100) == (50, 0))
                #expect(try await take(1) == (0, 0))
                // Tokens handed back (a batch that sent fewer) are there for the next.
                #expect(try await take(3, returned: 5) == (3, 2))
                // Never more than a minute's worth.
                #expect(try await take(0, returned: 1_000) == (0, 60))
                try await connection.query("ROLLBACK", logger: TestDatabase.logger)
            }
        }
    }

    @Test func anInboxPageSkipsWhatWasAcknowledgedAndExpiresWhatRanOut() async throws {
        try await TestDatabase.withStore { store in
            let app = try await store.api.createApp(name: "Inbox")
            let registered = try await store.api.devices.register(appKey: app.app.appKey, DeviceRegistration(platform: .linux))
            let device = try #require(try await store.gateway.device(registrationID: registered.registrationID)).deviceID
            let now = Date()
            let later = now.addingTimeInterval(3_600)
            let past = now.addingTimeInterval(-1)
            for (seq, expires) in [(1, later), (2, later), (3, past), (4, later), (5, later)] {
                try await store.sql.query(
                    """
                    INSERT INTO device_messages (device_id, seq, msg_id, payload, expires_at)
                    VALUES (\(device), \(Int64(seq)), \("m\(seq)"), '\\x00'::bytea, \(expires))
                    """
                )
            }
            try await store.sql.query("INSERT INTO device_acks (device_id, acked_seq, sent_seq) VALUES (\(device), 1, 2)")
            func page(after: Int64, limit: Int64) async throws -> [(seq: Int64, msgID: String, sent: Bool)] {
                let rows = try await store.sql.query(
                    "SELECT seq, msg_id, sent FROM herald_inbox_page(\(device), \(after), \(limit), \(now)) WHERE seq IS NOT NULL"
                )
                var found: [(Int64, String, Bool)] = []
                for try await row in rows.decode((Int64, String, Bool).self) { found.append(row) }
                return found
            }
            // Acknowledged up to 1, sent up to 2; 3 ran out.
            let first = try await page(after: 0, limit: 2)
            #expect(first.map(\.seq) == [2, 4])
            #expect(first.map(\.sent) == [true, false])
            #expect(try await page(after: 4, limit: 10).map(\.msgID) == ["m5"])
            // The expired copy is deleted, not only skipped.
            let left = try await store.sql.query("SELECT count(*)::int FROM device_messages WHERE device_id = \(device) AND seq = 3")
            for try await count in left.decode(Int.self) { #expect(count == 0) }
        }
    }

    @Test func theAuditLogRefusesUpdatesDeletionsAndTruncation() async throws {
        try await TestDatabase.withStore { store in
            try await store.sql.query(
                """
                INSERT INTO audit_log (at_us, actor, action, target, status, hash)
                VALUES (1, 'admin_token', 'POST /admin/v1/apps', '/admin/v1/apps', 201, '\\x00'::bytea)
                """
            )
            for statement: PostgresQuery in [
                "UPDATE audit_log SET status = 200",
                "DELETE FROM audit_log",
                "TRUNCATE audit_log",
            ] {
                let error = await #expect(throws: PSQLError.self) { try await store.sql.query(statement) }
                #expect(error?.serverInfo?[.message] == "audit_log is append-only", "\(statement.sql)")
            }
            let rows = try await store.sql.query("SELECT count(*)::int FROM audit_log")
            for try await count in rows.decode(Int.self) { #expect(count == 1) }
        }
    }

    /// The hot tables have no foreign keys (migration 0005): the triggers delete what
    /// belonged to a deleted app, message or device.
    @Test func deletingAnAppTakesItsMessagesJobsDeliveriesAndItsDevicesRowsWithIt() async throws {
        try await TestDatabase.withStore { store in
            let app = try await store.api.createApp(name: "Going")
            let kept = try await store.api.createApp(name: "Staying")
            var devices: [Int64] = []
            for created in [app, kept] {
                let registered = try await store.api.devices.register(appKey: created.app.appKey, DeviceRegistration(platform: .linux))
                devices.append(try #require(try await store.gateway.device(registrationID: registered.registrationID)).deviceID)
            }
            for (created, device) in zip([app, kept], devices) {
                try await store.sql.query(
                    """
                    WITH m AS (
                        INSERT INTO messages (app_id, msg_id, request, identifier, time_to_live, expires_at)
                        VALUES (\(created.app.id), \("msg-\(device)"), '{}'::json, \("msg-\(device)"), 3600, now() + interval '1 hour')
                        RETURNING id
                    ), j AS (
                        INSERT INTO push_jobs (message_id, kind, available_at) SELECT id, 'push', now() FROM m
                    )
                    INSERT INTO deliveries (message_id, device_id, state, inbox_seq) SELECT id, \(device), 'pending', 1 FROM m
                    """
                )
                try await store.sql.query(
                    """
                    INSERT INTO device_messages (device_id, seq, msg_id, payload, expires_at)
                    VALUES (\(device), 1, \("msg-\(device)"), '\\x00'::bytea, now() + interval '1 hour')
                    """
                )
                try await store.sql.query("INSERT INTO device_acks (device_id, acked_seq, sent_seq) VALUES (\(device), 0, 0)")
            }
            try await store.sql.query("DELETE FROM devices WHERE id = \(devices[0])")
            #expect(try await rows(store, for: devices[0]) == [0, 0, 0])
            try await store.sql.query("DELETE FROM apps WHERE id = \(app.app.id)")
            let messages = try await store.sql.query("SELECT count(*)::int FROM messages WHERE app_id = \(app.app.id)")
            for try await count in messages.decode(Int.self) { #expect(count == 0) }
            let jobs = try await store.sql.query("SELECT count(*)::int FROM push_jobs")
            for try await count in jobs.decode(Int.self) { #expect(count == 1, "the other app's job stays") }
            #expect(try await rows(store, for: devices[1]) == [1, 1, 1])
        }
    }

    /// The deliveries' one writer: each copy still pending or waiting takes its new state,
    /// reason, retry time and attempt; a copy already finished is left alone; the finished
    /// jobs go and their message is marked fanned out; the copies flagged for events get
    /// theirs (`stored` the first time a stored copy is recorded, the channel's `sent_…`
    /// with its data, `failed` with its reason and channel), and a callback asking for
    /// "sent" gets one request per sent event.
    @Test func recordingDeliveriesMovesOnlyUnfinishedCopiesAndWritesTheirEvents() async throws {
        try await TestDatabase.withStore { store in
            let app = try await store.api.createApp(name: "Recorded")
            var devices: [Int64] = []
            for _ in 0..<4 {
                let registered = try await store.api.devices.register(appKey: app.app.appKey, DeviceRegistration(platform: .linux))
                devices.append(try #require(try await store.gateway.device(registrationID: registered.registrationID)).deviceID)
            }
            var message: Int64 = 0
            var job: Int64 = 0
            let created = try await store.sql.query(
                """
                WITH m AS (
                    INSERT INTO messages (app_id, msg_id, request, identifier, time_to_live, expires_at)
                    VALUES (\(app.app.id), 'rec-1', '{}'::json, 'rec-1', 3600, now() + interval '1 hour')
                    RETURNING id
                ), j AS (
                    INSERT INTO push_jobs (message_id, kind, available_at) SELECT id, 'push', now() FROM m RETURNING id
                ), c AS (
                    INSERT INTO message_callbacks (message_id, app_id, url, type) SELECT id, \(app.app.id), 'http://cb.test/', 8 FROM m
                )
                SELECT m.id, j.id FROM m, j
                """
            )
            for try await (m, j) in created.decode((Int64, Int64).self) { (message, job) = (m, j) }
            // Devices 0-2 pending (0 with an inbox copy), device 3 already delivered.
            try await store.sql.query(
                """
                INSERT INTO deliveries (message_id, device_id, state, inbox_seq)
                VALUES (\(message), \(devices[0]), 'pending', 1), (\(message), \(devices[1]), 'pending', NULL),
                       (\(message), \(devices[2]), 'pending', NULL), (\(message), \(devices[3]), 'tcp', NULL)
                """
            )
            let retryAt = Date().addingTimeInterval(600)
            let epoch = Date(timeIntervalSince1970: 0)
            let messages = Array(repeating: message, count: 4)
            let states = ["apns", "waiting", "failed", "failed"]
            let reasons = ["", "TooManyRequests", "UNREGISTERED", "BadDeviceToken"]
            let retries = [epoch, retryAt, epoch, epoch]
            let attempted: [Int32] = [1, 1, 1, 1]
            let eventRows: [Int32] = [1, 3, 4]
            let eventData = [#"{"apns_id": "a1", "apns_status": 200, "channel": "apns"}"#, #"{"channel": "fcm"}"#, "{}"]
            try await store.sql.query(
                """
                SELECT herald_record_deliveries(\(messages)::bigint[], \(devices)::bigint[], \(states)::text[], \(reasons)::text[],
                    \(retries)::timestamptz[], \(attempted)::integer[], ARRAY[\(job)]::bigint[], \(eventRows)::integer[], \(eventData)::jsonb[])
                """
            )
            let copies = try await store.sql.query(
                """
                SELECT device_id, state, apns_reason, next_attempt_at, apns_attempts FROM deliveries
                WHERE message_id = \(message) ORDER BY device_id
                """
            )
            var found: [Int64: (state: String, reason: String?, retry: Date?, attempts: Int32)] = [:]
            for try await (device, state, reason, retry, attempts) in copies.decode((Int64, String, String?, Date?, Int32).self) {
                found[device] = (state, reason, retry, attempts)
            }
            #expect(found[devices[0]]?.state == "apns" && found[devices[0]]?.reason == nil && found[devices[0]]?.attempts == 1)
            #expect(found[devices[1]]?.state == "waiting" && found[devices[1]]?.reason == "TooManyRequests")
            #expect(abs((found[devices[1]]?.retry ?? epoch).timeIntervalSince(retryAt)) < 0.01)
            #expect(found[devices[2]]?.state == "failed" && found[devices[2]]?.reason == "UNREGISTERED")
            #expect(found[devices[3]]?.state == "tcp" && found[devices[3]]?.reason == nil && found[devices[3]]?.attempts == 0, "finished: untouched")
            let jobs = try await store.sql.query("SELECT count(*)::int FROM push_jobs WHERE id = \(job)")
            for try await count in jobs.decode(Int.self) { #expect(count == 0) }
            let fanned = try await store.sql.query("SELECT fanned_out_at IS NOT NULL FROM messages WHERE id = \(message)")
            for try await marked in fanned.decode(Bool.self) { #expect(marked) }
            let events = try await store.sql.query(
                "SELECT device_id, type, data::text FROM events WHERE message_id = \(message) ORDER BY device_id, id"
            )
            var written: [(device: Int64, type: String, data: [String: Any])] = []
            for try await (device, type, data) in events.decode((Int64, String, String).self) {
                written.append((device, type, try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] ?? [:]))
            }
            #expect(written.map(\.type) == ["stored", "sent_apns", "failed"], "device 1 unflagged, device 3 finished: \(written.map(\.type))")
            #expect(written.allSatisfy { [devices[0], devices[2]].contains($0.device) })
            #expect(written[1].data["apns_id"] as? String == "a1" && written[1].data["channel"] as? String == "apns")
            #expect(written[2].data["reason"] as? String == "UNREGISTERED" && written[2].data["channel"] as? String == "fcm")
            let callbacks = try await store.sql.query("SELECT body FROM callback_outbox WHERE app_id = \(app.app.id)")
            var bodies: [String] = []
            for try await body in callbacks.decode(String.self) { bodies.append(body) }
            #expect(
                bodies.count == 1 && bodies[0].contains(#""event" : "sent_apns""#)
                    || bodies.count == 1 && bodies[0].contains(#""event":"sent_apns""#),
                "\(bodies)"
            )
        }
    }

    /// The rows a device has in the inbox, the deliveries and the acknowledgements.
    private func rows(_ store: TestStores, for device: Int64) async throws -> [Int] {
        var counts: [Int] = []
        for table in ["device_messages", "deliveries", "device_acks"] {
            let rows = try await store.sql.query(PostgresQuery(unsafeSQL: "SELECT count(*)::int FROM \(table) WHERE device_id = \(device)"))
            for try await count in rows.decode(Int.self) { counts.append(count) }
        }
        return counts
    }
}
