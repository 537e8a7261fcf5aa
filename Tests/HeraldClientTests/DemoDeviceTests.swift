import Foundation
import HeraldNodeTesting
import HeraldTestSupport
import Testing

/// `herald-device`, the demo on HeraldKit's core: what an iPhone would show and remove.
struct DemoDeviceTests {
    @Test func theDemoDevicePrintsWhatAnIPhoneWouldShowAndRemove() async throws {
        guard let herald = HeraldBinary.url else { throw TestFailure("herald binary not found; build it first") }
        let binary = herald.deletingLastPathComponent().appendingPathComponent("herald-device")
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("herald-device-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: state) }
        try await TestNode.run { test in
            let arguments = [
                "--api", test.apiURL.absoluteString, "--port", "\(test.gatewayPort)", "--app-key", test.appKey, "--state", state.path,
                "--alias", "demo",
            ]
            let device = Task { try await ChildProcess.run(binary, arguments, environment: [:], timeout: 8) }
            try await waitUntil("the demo device to connect", timeout: .seconds(8)) { test.gateway.connectionCount == 1 }
            let sent = try await test.push([
                "audience": ["alias": ["demo"]], "notification": ["alert": "Hello from Herald"], "options": ["identifier": "greeting"],
            ])
            #expect(sent.status == 200, "\(sent.json)")
            try await Task.sleep(for: .milliseconds(800))
            let recalled = try await test.call("POST", "/v3/push/recall", ["identifiers": ["greeting"]])
            #expect(recalled.status == 200, "\(recalled.json)")
            let output = try await device.value.stdout
            #expect(output.contains("iphone: show [greeting] Hello from Herald"), "\(output)")
            #expect(output.contains("iphone: remove greeting (delivered and pending)"), "\(output)")
        }
    }

    /// End to end against a real node: the demo device gets a push, a replace and a recall
    /// over its connection; offline, a push through the APNs sandbox, carried out as its
    /// Notification Service Extension would; its receipts reach the messages' timelines and
    /// the report.
    @Test func theDemoDevicesReceiptsReachTheTimelineAndTheReportOverBothChannels() async throws {
        guard let herald = HeraldBinary.url else { throw TestFailure("herald binary not found; build it first") }
        let binary = herald.deletingLastPathComponent().appendingPathComponent("herald-device")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-device-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let state = folder.appendingPathComponent("device.json").path
        try await TestNode.run { test in
            try await test.recordEvents()
            let token = TestNode.token(77)
            let arguments = [
                "--api", test.apiURL.absoluteString, "--port", "\(test.gatewayPort)", "--app-key", test.appKey, "--state", state,
                "--alias", "demo-e2e", "--apns-token", token, "--receipt-spread", "1",
            ]
            let device = Task { try await ChildProcess.run(binary, arguments, environment: [:], timeout: 10) }
            try await waitUntil("the demo device to connect", timeout: .seconds(8)) { test.gateway.connectionCount == 1 }
            let saved = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: state))) as? [String: Any]
            let rid = try #require(saved?["registration_id"] as? String)
            let audience: JSON = ["alias": ["demo-e2e"]]
            let first = try await test.push(["audience": audience, "notification": ["alert": "1-0"], "options": ["identifier": "score"]])
            _ = try await test.timeline(first.msgID, rid, until: "acknowledged")
            let second = try await test.push(["audience": audience, "notification": ["alert": "2-0"], "options": ["replace": "score"]])
            _ = try await test.timeline(second.msgID, rid, until: "acknowledged")
            #expect(try await test.call("POST", "/v3/push/recall", ["identifiers": ["score"]]).status == 200)
            // The receipts of what was shown, sent within their spread (1 s).
            _ = try await test.timeline(second.msgID, rid, until: "displayed")
            let online = try await device.value.stdout
            #expect(online.contains("iphone: show [score] 1-0"), "\(online)")
            #expect(online.contains("iphone: re-post [score] 2-0"), "\(online)")
            #expect(online.contains("iphone: remove score (delivered and pending)"), "\(online)")
            let shown = (try await test.timeline(first.msgID, rid, until: "displayed").json["timeline"].array ?? []).map { $0["type"].string ?? "" }
            // The recall (message-level) falls where it falls; a receipt reported before the
            // server's batch wrote the copy's own events comes before them (only `opened` is
            // ordered after them so far: migration 0030).
            #expect(Set(shown) == ["accepted", "stored", "sent_tcp", "acknowledged", "displayed", "recalled"], "\(shown)")

            // Offline: through the APNs sandbox, then the extension's work.
            try await waitUntil("the demo device to disconnect", timeout: .seconds(8)) { test.gateway.connectionCount == 0 }
            let offline = try await test.push(["audience": audience, "notification": ["alert": "Final: 3-0"]])
            let apns = try #require(try await test.waitForAPNs(token).first)
            let payload = folder.appendingPathComponent("apns.json")
            try Data(apns.payload).write(to: payload)
            let extensionRun = try await ChildProcess.run(
                binary,
                ["--api", test.apiURL.absoluteString, "--app-key", test.appKey, "--state", state, "--apns", payload.path],
                environment: [:],
                timeout: 10
            )
            #expect(extensionRun.stdout.contains("iphone: show [\(offline.msgID)] Final: 3-0"), "\(extensionRun.stdout)")
            #expect(extensionRun.stdout.contains("receipts sent 2"), "\(extensionRun.stdout) \(extensionRun.stderr)")
            let timeline = try await test.timeline(offline.msgID, rid, until: "displayed").json["timeline"].array ?? []
            let types = timeline.map { $0["type"].string ?? "" }
            #expect(Set(types) == ["accepted", "stored", "sent_apns", "delivered", "displayed"], "\(types)")
            #expect(types.firstIndex(of: "delivered")! < types.firstIndex(of: "displayed")!, "\(types)")
            let report = try await test.settledReport(offline.msgID)
            #expect(report["device"]["delivered"].int == 1 && report["device"]["displayed"].int == 1, "\(report)")
            let received = try await test.call("GET", "/v3/received?msg_ids=\(offline.msgID)").json[0]
            #expect(received["ios_apns_received"].int == 1, "\(received)")
        }
    }
}
