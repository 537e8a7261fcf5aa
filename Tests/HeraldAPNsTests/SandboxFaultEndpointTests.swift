import Foundation
import HeraldAPNsSandbox
import HeraldTestSupport
import Logging
import Testing

/// The inspection server's `/faults`: an outage a fault run (another process) can start
/// and end over HTTP.
@Suite struct SandboxFaultEndpointTests {
    private func call(_ port: Int, _ method: String, _ body: String? = nil) async throws -> (Int, [String: Any]) {
        let answer = try await TestHTTP.exchange(method, "http://127.0.0.1:\(port)/faults", body: body.map { Data($0.utf8) }, timeout: .seconds(10))
        return (answer.status, (try? JSONSerialization.jsonObject(with: answer.body)) as? [String: Any] ?? [:])
    }

    @Test func anOutageIsStartedShownAndEndedOverHTTP() async throws {
        let sandbox = try await APNsSandbox.start(configuration: .init(transport: .plaintext))
        let server = try await SandboxInspectionServer.bind(sandbox: sandbox, port: 0, logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            defer { group.cancelAll() }

            #expect(try await call(server.port, "GET").1["fault"] is NSNull)
            let set = try await call(server.port, "POST", #"{"status": 503, "reason": "ServiceUnavailable"}"#)
            #expect(set.0 == 201)
            #expect(sandbox.faultForEveryRequest == .serviceUnavailable)
            let shown = try await call(server.port, "GET").1["fault"] as? [String: Any]
            #expect(shown?["status"] as? Int == 503)
            #expect(shown?["reason"] as? String == "ServiceUnavailable")

            // Bad input changes nothing.
            for body in [#"{"status": 200, "reason": "x"}"#, #"{"status": 503}"#, "nope"] {
                #expect(try await call(server.port, "POST", body).0 == 400)
            }
            #expect(sandbox.faultForEveryRequest == .serviceUnavailable)

            #expect(try await call(server.port, "DELETE").0 == 200)
            #expect(sandbox.faultForEveryRequest == nil)

            // Requests that get no answer, queued for the next ones.
            let queued = try await call(server.port, "POST", #"{"never_answer": 3}"#)
            #expect(queued.0 == 201)
            #expect(sandbox.queuedFaultCount == 3)
            for body in [#"{"never_answer": 0}"#, #"{"never_answer": "3"}"#, #"{"never_answer": 3, "status": 503}"#] {
                #expect(try await call(server.port, "POST", body).0 == 400)
            }
            #expect(sandbox.queuedFaultCount == 3)
            #expect(sandbox.faultForEveryRequest == nil)
        }
        await sandbox.shutdown()
    }
}
