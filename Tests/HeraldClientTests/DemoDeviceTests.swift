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
}
