import Foundation
import HeraldAPNsSandbox
import HeraldCenter
import HeraldCore
import HeraldKit
import HeraldMQTT
import HeraldNode
import HeraldNodeTesting
import HeraldStore
import HeraldTestSupport
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO
import Testing

/// The delivery event log end to end: the stream and its cursor across a restart, the
/// per-device timeline over MQTT and APNs, JPush's per-push callback, and an app that
/// records nothing.
@Suite struct EventLogTests {
    @Test func theEventStreamResumesFromACursorAfterARestart() async throws {
        try await TestDatabase.withDatabase { url in
            let sandbox = try await APNsSandbox.start(configuration: .init(transport: .plaintext))
            defer { Task { await sandbox.shutdown() } }
            let saved = NIOLockedValueBox<(app: CreatedApp, cursor: String, before: [String], after: String)?>(nil)
            try await TestNode.run(on: url, sandbox: sandbox, app: nil) { test in
                try await test.recordEvents()
                _ = try await test.register(platform: "android", alias: "a")
                var before: [String] = []
                for index in 0..<2 {
                    before.append(try await test.push(["audience": ["alias": ["a"]], "message": ["msg_content": .string("m\(index)")]]).msgID)
                }
                let (read, cursor) = try await Self.acceptedEvents(test, count: 2)
                #expect(read == before)
                // Accepted while the consumer is away, then the node stops.
                let after = try await test.push(["audience": ["alias": ["a"]], "message": ["msg_content": "while away"]]).msgID
                saved.withLockedValue { $0 = (test.app, cursor, before, after) }
            }
            let state = try #require(saved.withLockedValue { $0 })
            try await TestNode.run(on: url, sandbox: sandbox, app: state.app) { test in
                let resumed = try await Self.acceptedEvents(test, count: 1, after: state.cursor)
                #expect(resumed.ids == [state.after])
                // As server-sent events: each event's id is its cursor; Last-Event-ID resumes.
                let streamed = try await test.serverSentEvents(query: "types=accepted", lastEventID: state.cursor, count: 1)
                #expect(streamed.map { $0.data["msg_id"].string ?? "" } == [state.after])
                let next = try await test.push(["audience": ["alias": ["a"]], "message": ["msg_content": "next"]]).msgID
                let resumedStream = try await test.serverSentEvents(query: "types=accepted", lastEventID: streamed.last?.id, count: 1)
                #expect(resumedStream.map { $0.data["msg_id"].string ?? "" } == [next])
                #expect(resumedStream.first?.event == "delivery")
                // A cursor that is not one is refused.
                #expect(try await test.call("GET", "/v3/events?after=nope").error == HeraldError.Code.invalidField.rawValue)
                #expect(try await test.call("GET", "/v3/events?types=nope").error == HeraldError.Code.invalidField.rawValue)
                #expect(try await test.call("GET", "/v3/events?wait=31").error == HeraldError.Code.invalidField.rawValue)
            }
        }
    }

    /// The msg_ids of the next `count` accepted events after `after`, and the cursor after
    /// them. A page can hold fewer than there are: the stream shows an event once every
    /// older transaction has ended, and the test database's server runs other tests'
    /// transactions too; so it reads on from each page's cursor.
    static func acceptedEvents(_ test: TestNode, count: Int, after: String? = nil) async throws -> (ids: [String], cursor: String) {
        var ids: [String] = []
        var cursor = after
        let deadline = ContinuousClock.now + .seconds(20)
        while ids.count < count, ContinuousClock.now < deadline {
            let page = try await test.call(
                "GET",
                "/v3/events?types=accepted&wait=5&limit=\(count - ids.count)" + (cursor.map { "&after=\($0)" } ?? "")
            )
            #expect(page.status == 200)
            ids += page.json["events"].array?.map { $0["msg_id"].string ?? "" } ?? []
            cursor = page.json["cursor"].string ?? cursor
        }
        return (ids, try #require(cursor))
    }

    @Test func theTimelineOfACopyOverMQTTAndOfOneOverAPNs() async throws {
        try await TestNode.run { test in
            try await test.recordEvents()
            let online = try await test.register(platform: "android", alias: "online")
            try await test.online(online) { reader in
                let sent = try await test.push(["audience": ["alias": ["online"]], "notification": ["alert": "Hi"]])
                _ = try await reader.next(where: \.isNotification)
                var answer = try await test.timeline(sent.msgID, online.registrationID, until: "acknowledged")
                // The copy's state is recorded by the center's next batch of outcomes, a
                // moment after the acknowledgement's event.
                try await waitUntilAsync("the copy's state to be tcp") {
                    answer = try await test.call("GET", "/v3/messages/\(sent.msgID)/devices/\(online.registrationID)")
                    return answer.json["state"].string == "tcp"
                }
                #expect(answer.json["source"].string == "events")
                let steps = answer.json["timeline"].array ?? []
                #expect(steps.map { $0["type"].string ?? "" } == ["accepted", "stored", "sent_tcp", "acknowledged"])
                #expect(steps[1]["data"]["inbox_seq"].int == 1)
                #expect(steps.allSatisfy { $0["at"].string != nil })
            }
            let token = TestNode.token(7)
            let offline = try await test.register(token: token, alias: "offline")
            let sent = try await test.push(["audience": ["alias": ["offline"]], "notification": ["alert": "Hi"]])
            let received = try #require(try await test.waitForAPNs(token).first)
            let answer = try await test.timeline(sent.msgID, offline.registrationID, until: "sent_apns")
            let steps = answer.json["timeline"].array ?? []
            #expect(steps.map { $0["type"].string ?? "" } == ["accepted", "stored", "sent_apns"])
            let apns = try #require(steps.last)
            #expect(apns["data"]["apns_id"].string == received.apnsID.uuidString.lowercased())
            #expect(apns["data"]["apns_status"].int == 200)
            #expect(apns["data"]["channel"].string == "apns")
            // Not found: a message or device not of the app.
            #expect(
                try await test.call("GET", "/v3/messages/1234567890123456789/devices/\(offline.registrationID)").error
                    == HeraldError.Code.messageNotFound.rawValue
            )
            #expect(
                try await test.call("GET", "/v3/messages/\(sent.msgID)/devices/0123456789abcdef0123456789abcdef").error
                    == HeraldError.Code.deviceNotFound.rawValue
            )
        }
    }

    /// A device that reports it opened a copy before it acknowledges it (or before the
    /// center records the delivery: both are written in batches): the copy's events still
    /// read stored, sent, acknowledged, opened, in the event log as in the timeline.
    @Test func anOpenedReportedBeforeItsAcknowledgementComesAfterItInTheLog() async throws {
        try await TestNode.run { test in
            try await test.recordEvents()
            let device = try await test.register(platform: "linux")
            let connection = try await test.rawConnection(device)
            let sent = try await test.push(["audience": ["registration_id": [.string(device.registrationID)]], "notification": ["alert": "Hi"]])
            let publish = try #require(try await connection.nextPublish(acknowledge: false))
            var opened = ByteBuffer()
            opened.writeString(#"{"event": "opened", "msg_id": "\#(sent.msgID)"}"#)
            try await connection.send(.publish(.init(topic: "herald/\(device.registrationID)/events", payload: opened)))
            // The report is recorded (the copy's opened_at) before the acknowledgement is sent.
            try await waitUntilAsync("the report to be recorded") {
                try await test.count("deliveries WHERE opened_at IS NOT NULL") == 1
            }
            try await connection.send(.pubAck(packetID: try #require(publish.packetID)))
            let answer = try await test.timeline(sent.msgID, device.registrationID, until: "opened")
            let types = (answer.json["timeline"].array ?? []).map { $0["type"].string ?? "" }
            #expect(types == ["accepted", "stored", "sent_tcp", "acknowledged", "opened"])
            let rows = try await test.stores.sql.query(
                "SELECT type FROM events WHERE msg_id = \(sent.msgID) ORDER BY id",
                logger: TestDatabase.logger
            )
            var logged: [String] = []
            for try await type in rows.decode(String.self) { logged.append(type) }
            #expect(logged == ["accepted", "stored", "sent_tcp", "acknowledged", "opened"])
            await connection.close()
        }
    }

    @Test func aPushCallbackReportsSentAndReceivedWithItsParams() async throws {
        try await TestReceiver.run { receiver in
            let quick: @Sendable (inout HeraldNodeConfiguration) -> Void = {
                $0.webhooks.pollInterval = .milliseconds(50)
                $0.allowLoopbackReceivers()
            }
            try await TestNode.run(configure: quick) { test in
                // The app records nothing else: the push's callback is enough for its own events.
                let device = try await test.register(platform: "android", alias: "cb")
                try await test.online(device) { reader in
                    let sent = try await test.push([
                        "audience": ["alias": ["cb"]],
                        "notification": ["alert": "Hi"],
                        "callback": ["url": .string(receiver.url("/jpush")), "params": ["order": "A-17", "n": 3], "type": 9],
                    ])
                    #expect(sent.status == 200)
                    #expect(sent.json["warnings"].array?.isEmpty ?? true)
                    _ = try await reader.next(where: \.isNotification)
                    #expect(try await receiver.wait { $0.count >= 2 })
                    let bodies = receiver.requests.map(\.json)
                    #expect(Set(bodies.compactMap { $0["type"].int }) == [1, 8])
                    #expect(bodies.allSatisfy { $0["msg_id"].string == sent.msgID })
                    #expect(bodies.allSatisfy { $0["registration_id"].string == device.registrationID })
                    #expect(bodies.allSatisfy { $0["params"]["order"].string == "A-17" && $0["params"]["n"].int == 3 })
                    #expect(bodies.first { $0["type"].int == 8 }?["status"].string == "sent")
                    #expect(bodies.first { $0["type"].int == 1 }?["status"].string == "received")
                    #expect(receiver.requests.allSatisfy { $0.path == "/jpush" })
                    // Delivered callbacks leave the outbox; only this push's events were recorded.
                    let deadline = ContinuousClock.now + .seconds(5)
                    while try await test.count("callback_outbox") > 0, ContinuousClock.now < deadline {
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    #expect(try await test.count("callback_outbox") == 0)
                    #expect(try await test.count("events WHERE type = 'opened'") == 0)
                }
            }
        }
    }

    @Test func aCallbackURLThatIsNotOneIsRefusedAtAcceptance() async throws {
        try await TestNode.run { test in
            _ = try await test.register(platform: "android", alias: "x")
            for url: JSON in ["ftp://example.com/cb", "https://", "not a url"] {
                let answer = try await test.push(["audience": ["alias": ["x"]], "notification": ["alert": "Hi"], "callback": ["url": url]])
                #expect(answer.error == HeraldError.Code.invalidField.rawValue)
                #expect(answer.json["error"]["message"].string?.contains("callback.url") == true)
            }
            let missing = try await test.push(["audience": ["alias": ["x"]], "notification": ["alert": "Hi"], "callback": ["type": 1]])
            #expect(missing.error == HeraldError.Code.invalidField.rawValue)
            #expect(try await test.count("messages") == 0)
        }
    }

    @Test func anAppWithoutEventsWritesNoEventRows() async throws {
        try await TestNode.run { test in
            let online = try await test.register(platform: "android", alias: "online")
            let token = TestNode.token(8)
            let offline = try await test.register(token: token, alias: "offline")
            try await test.online(online) { reader in
                let sent = try await test.push(["audience": ["alias": ["online", "offline"]], "notification": ["alert": "Hi"]])
                _ = try await reader.next(where: \.isNotification)
                _ = try await test.waitForAPNs(token)
                _ = try await test.settledReport(sent.msgID)
                #expect(try await test.call("DELETE", "/v3/push/\(sent.msgID)").status == 200)
                // Without events the timeline comes from the delivery row, and says so.
                let answer = try await test.call("GET", "/v3/messages/\(sent.msgID)/devices/\(offline.registrationID)")
                #expect(answer.json["source"].string == "deliveries")
                #expect(answer.json["timeline"].array?.map { $0["type"].string ?? "" } == ["accepted", "stored", "sent_apns", "recalled"])
            }
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await test.count("events") == 0)
            #expect(try await test.count("callback_outbox") == 0)
            #expect(try await test.count("messages WHERE events") == 0)
            let stream = try await test.call("GET", "/v3/events")
            #expect(stream.json["events"].array?.isEmpty == true)
        }
    }
}
