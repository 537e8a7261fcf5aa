import Foundation
import HeraldAPNsSandbox
import HeraldCenter
import HeraldSMS
import HeraldTestSupport
import Logging
import Testing

@testable import HeraldServer

/// The SMS sandbox at the local sandbox's inspection endpoint (`/sms`): what it took, its
/// counts, and faults started and ended over HTTP.
@Suite struct SMSSandboxInspectionTests {
    private func call(_ port: Int, _ method: String, _ path: String, _ body: String? = nil) async throws -> (Int, Any?) {
        let answer = try await TestHTTP.exchange(method, "http://127.0.0.1:\(port)\(path)", body: body.map { Data($0.utf8) }, timeout: .seconds(10))
        return (answer.status, try? JSONSerialization.jsonObject(with: answer.body))
    }

    private func request(_ mobile: String, _ key: String) -> SMSRequest {
        SMSRequest(appID: 1, mobile: mobile, content: "Your code is 1234", idempotencyKey: key, msgID: "42")
    }

    @Test func sentSMSAreListedCountedAndClearedAndFaultsAreSetOverHTTP() async throws {
        let apns = try await APNsSandbox.start(configuration: .init(transport: .plaintext))
        let sms = SMSSandbox()
        let server = try await SandboxInspectionServer.bind(
            sandbox: apns,
            resources: [SMSSandboxInspection(sandbox: sms)],
            port: 0,
            logger: Logger(label: "test")
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            defer { group.cancelAll() }
            let port = server.port

            #expect(await sms.send(request("+8613800138000", "42:a")) == .sent)
            #expect(await sms.send(request("+4915112345678", "42:b")) == .sent)
            #expect(await sms.send(request("+4915112345678", "42:b")) == .sent)  // a retry of the same SMS
            let listed = try await call(port, "GET", "/sms")
            #expect(listed.0 == 200)
            let all = try #require(listed.1 as? [[String: Any]])
            #expect(all.map { $0["mobile"] as? String } == ["+8613800138000", "+4915112345678"])
            #expect(all[0]["content"] as? String == "Your code is 1234")
            #expect(all[0]["msg_id"] as? String == "42")
            #expect(all[0]["idempotency_key"] as? String == "42:a")
            let one = try #require(try await call(port, "GET", "/sms?mobile=%2B4915112345678").1 as? [[String: Any]])
            #expect(one.count == 1)
            let stats = try #require(try await call(port, "GET", "/sms/stats").1 as? [String: Any])
            #expect(stats["received"] as? Int == 2)
            #expect(stats["duplicates"] as? Int == 1)

            // Faults: the next request fails (to be retried), then all is well again.
            #expect(try await call(port, "POST", "/sms/faults", #"{"fail_next": 1}"#).0 == 201)
            #expect(await sms.send(request("+8613800138001", "43:a")) == .retryLater(reason: "SandboxFault"))
            #expect(await sms.send(request("+8613800138001", "43:a")) == .sent)
            #expect(try await call(port, "POST", "/sms/faults", #"{"delay_ms": 50}"#).0 == 201)
            #expect(try await call(port, "DELETE", "/sms/faults").0 == 200)
            // Bad input is refused and changes nothing.
            for body in [#"{"fail_next": -1}"#, #"{"delay_ms": "x"}"#, #"{"other": 1}"#, "{}", "nope"] {
                #expect(try await call(port, "POST", "/sms/faults", body).0 == 400, "\(body)")
            }
            #expect(await sms.send(request("+8613800138002", "44:a")) == .sent)
            #expect(try await call(port, "PUT", "/sms").0 == 405)
            #expect(try await call(port, "GET", "/sms/nope").0 == 404)

            let cleared = try #require(try await call(port, "DELETE", "/sms").1 as? [String: Any])
            #expect(cleared["cleared"] as? Int == 4)
            #expect((try await call(port, "GET", "/sms").1 as? [Any])?.isEmpty == true)
            // The APNs sandbox's own paths are where they were.
            #expect(try await call(port, "GET", "/stats").0 == 200)
        }
        await apns.shutdown()
    }
}
