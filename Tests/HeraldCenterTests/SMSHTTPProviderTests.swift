import Crypto
import Foundation
import HeraldCenter
import HeraldCore
import HeraldNode
import HeraldNodeTesting
import HeraldSMS
import HeraldTestSupport
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore
import Testing

/// An app's own SMS provider over HTTP: set through the admin API, sealed, and sent a
/// signed request per SMS, received here by a real local HTTP server.
@Suite struct SMSHTTPProviderTests {
    struct Received: Sendable {
        var headers: [String: String]
        var body: [UInt8]
    }

    /// Runs a local HTTP server that records each POST /sms and answers `status`
    /// (`statuses` first, in order), for `body` with its port.
    private func withProviderServer(
        statuses: [Int],
        _ body: @Sendable (Int, NIOLockedValueBox<[Received]>) async throws -> Void
    ) async throws {
        let received = NIOLockedValueBox<[Received]>([])
        let answers = NIOLockedValueBox(statuses)
        let router = Router()
        router.post("/sms") { request, _ -> Response in
            let bytes = try await request.body.collect(upTo: 1 << 16)
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName.lowercased()] = field.value }
            received.withLockedValue { $0.append(Received(headers: headers, body: Array(buffer: bytes))) }
            let status = answers.withLockedValue { $0.isEmpty ? 200 : $0.removeFirst() }
            return Response(status: .init(code: status))
        }
        let port = NIOLockedValueBox<Int?>(nil)
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in port.withLockedValue { $0 = channel.localAddress?.port } }
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.runService(gracefulShutdownSignals: []) }
            defer { group.cancelAll() }
            let deadline = ContinuousClock.now + .seconds(10)
            while port.withLockedValue({ $0 }) == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            try await body(try #require(port.withLockedValue { $0 }), received)
        }
    }

    @Test func theAppsProviderGetsOneSignedRequestPerSMSAfterARetry() async throws {
        let sandbox = SMSSandbox()
        let configure: @Sendable (inout HeraldNodeConfiguration) -> Void = { configuration in
            configuration.sms.provider = sandbox
            configuration.sms.retryDelay = .milliseconds(200)
            configuration.allowLoopbackReceivers()
        }
        try await withProviderServer(statuses: [503]) { port, received in
            try await TestNode.run(configure: configure) { test in
                let secret = "0123456789abcdef-secret"
                let template = #"{"to": {{mobile}}, "text": {{content}}, "ref": {{idempotency_key}}, "template": {{template_id}}}"#
                let set = try await test.call(
                    "PUT",
                    "/admin/v1/apps/\(test.appKey)/sms",
                    ["url": JSON("http://127.0.0.1:\(port)/sms"), "body_template": JSON(template), "secret": JSON(secret)],
                    as: .admin
                )
                #expect(set.status == 200, "\(set.json)")
                #expect(set.json["secret"].isNull)
                #expect(set.json["signature_header"].string == "X-Herald-Signature")
                let shown = try await test.call("GET", "/admin/v1/apps/\(test.appKey)/sms", as: .admin)
                #expect(shown.json["url"].string == "http://127.0.0.1:\(port)/sms")
                #expect(shown.json["secret"].isNull)
                // Sealed at rest: the secret isn't in the row.
                let rows = try await test.stores.sql.query("SELECT sms_provider FROM apps WHERE id = \(test.appID)", logger: TestDatabase.logger)
                for try await sealed in rows.decode(Data.self) { #expect(!String(decoding: sealed, as: UTF8.self).contains(secret)) }

                let device = try await test.register(platform: "android")
                let bound = try await test.call("POST", "/v3/devices/\(device.registrationID)", ["mobile": "+8613800000009"])
                #expect(bound.status == 200)
                let sent = try await test.push([
                    "audience": ["registration_id": [JSON(device.registrationID)]], "notification": ["alert": "x"],
                    "sms_message": ["content": "Your code is 42", "delay_time": 0],
                ])
                #expect(sent.status == 200)
                let deadline = ContinuousClock.now + .seconds(10)
                while try await test.count("sms_outbox WHERE state = 'sent'") == 0, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(50))
                }
                let requests = received.withLockedValue { $0 }
                // The first answer was 503: tried again, the same SMS.
                #expect(requests.count == 2)
                let last = try #require(requests.last)
                let body = try #require(try JSONSerialization.jsonObject(with: Data(last.body)) as? [String: Any])
                #expect(body["to"] as? String == "+8613800000009")
                #expect(body["text"] as? String == "Your code is 42")
                #expect(body["ref"] as? String == "\(sent.msgID):\(device.registrationID)")
                #expect(body["template"] is NSNull)
                #expect(last.headers["idempotency-key"] == "\(sent.msgID):\(device.registrationID)")
                let timestamp = try #require(last.headers["x-herald-timestamp"])
                let expected = HMAC<SHA256>.authenticationCode(
                    for: Array(timestamp.utf8) + [UInt8(ascii: ".")] + last.body,
                    using: SymmetricKey(data: Array(secret.utf8))
                ).map { String(format: "%02x", $0) }.joined()
                #expect(last.headers["x-herald-signature"] == "sha256=" + expected)
                #expect(requests.first?.headers["idempotency-key"] == last.headers["idempotency-key"])
                // The app's provider, not the node's default.
                #expect(sandbox.received.isEmpty)

                let badTemplate = try await test.call(
                    "PUT",
                    "/admin/v1/apps/\(test.appKey)/sms",
                    ["url": JSON("http://127.0.0.1:\(port)/sms"), "body_template": "{\"to\": {{mobile}", "secret": JSON(secret)],
                    as: .admin
                )
                #expect(badTemplate.error == HeraldError.Code.invalidField.rawValue)
                #expect(try await test.call("DELETE", "/admin/v1/apps/\(test.appKey)/sms", as: .admin).status == 204)
                let gone = try await test.call("GET", "/admin/v1/apps/\(test.appKey)/sms", as: .admin)
                #expect(gone.error == HeraldError.Code.smsProviderNotFound.rawValue)
            }
        }
    }
}
