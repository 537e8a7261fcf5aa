import Foundation
import HeraldGateway
import HeraldTestSupport
import NIOCore
import Testing

/// Real MQTT clients nobody here wrote, against the gateway. They run where installed
/// (the test command installs Debian's mosquitto-clients).
@Suite(.enabled(if: Mosquitto.subscriber != nil, "mosquitto_sub is not installed"))
struct InteroperabilityTests {
    @Test func mosquittoSubReceivesAMessageTheGatewayDelivers() async throws {
        try await GatewayTest.run { test in
            let (device, secret) = try await test.device()
            let subscriber = try Mosquitto.subscribe(
                port: try #require(test.address.port),
                clientID: device.registrationID,
                username: test.appKey,
                password: secret,
                topic: "herald/\(device.registrationID)/push"
            )
            #expect(try await test.eventually { test.gateway.isConnected(device.registrationID) })
            let outcome = try await test.gateway.deliver(test.message(#"{"alert":"hello from herald"}"#), to: device)
            #expect(outcome == .acknowledged)
            let result = try await subscriber.finish()
            #expect(result.status == 0, "\(result.output)")
            #expect(result.output.contains(#"{"alert":"hello from herald"}"#))
            #expect(try await test.eventually { try await test.store.acknowledgedSeq(deviceID: device.deviceID) == 1 })
        }
    }

    @Test func mosquittoSubOverTLSReceivesAMessage() async throws {
        let (certificate, key) = try TestCredentials.certificate()
        var configuration = GatewayConfiguration.test()
        configuration.tls = .init(host: "127.0.0.1", port: 0, certificateChainPEM: certificate, privateKeyPEM: key)
        try await GatewayTest.run(configuration: configuration) { test in
            let (device, secret) = try await test.device()
            let caFile = FileManager.default.temporaryDirectory.appendingPathComponent("herald-ca-\(UUID().uuidString).pem")
            try certificate.write(to: caFile, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: caFile) }
            let subscriber = try Mosquitto.subscribe(
                port: try #require(try await test.gateway.tlsLocalAddress.port),
                clientID: device.registrationID,
                username: test.appKey,
                password: secret,
                topic: "herald/\(device.registrationID)/push",
                extra: ["--cafile", caFile.path, "--insecure"]
            )
            #expect(try await test.eventually { test.gateway.isConnected(device.registrationID) })
            let outcome = try await test.gateway.deliver(test.message(#"{"alert":"over tls"}"#), to: device)
            #expect(outcome == .acknowledged)
            let result = try await subscriber.finish()
            #expect(result.status == 0, "\(result.output)")
            #expect(result.output.contains(#"{"alert":"over tls"}"#))
        }
    }

    @Test func mosquittoSubWithAWrongPasswordIsRefusedWithCode4() async throws {
        try await GatewayTest.run { test in
            let (device, _) = try await test.device()
            let subscriber = try Mosquitto.subscribe(
                port: try #require(test.address.port),
                clientID: device.registrationID,
                username: test.appKey,
                password: "wrong",
                topic: "herald/\(device.registrationID)/push"
            )
            let result = try await subscriber.finish()
            #expect(result.status != 0)
            #expect(result.output.lowercased().contains("bad user name or password"), "\(result.output)")
            #expect(!test.gateway.isConnected(device.registrationID))
        }
    }
}

enum Mosquitto {
    static let subscriber: String? = ["/usr/bin/mosquitto_sub", "/usr/local/bin/mosquitto_sub"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    struct Running: @unchecked Sendable {
        // Process is not Sendable; this one is only waited on and read after it exits.
        let process: Process
        let output: URL

        func finish() async throws -> (status: Int32, output: String) {
            // mosquitto_sub gives up by itself after 10 s; this bounds a client that doesn't.
            // Its exit read with waitpid (ChildExit), not Foundation's, which can miss it.
            let exit = ChildExit(process)
            let deadline = ContinuousClock.now + .seconds(30)
            var status = exit.exitStatus
            while status == nil {
                if ContinuousClock.now > deadline { kill(process.processIdentifier, SIGTERM) }
                try await Task.sleep(for: .milliseconds(20))
                status = exit.exitStatus
            }
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(at: output)
            return (status ?? -1, text)
        }
    }

    /// `mosquitto_sub` for one message at QoS 1, giving up after 10 seconds.
    static func subscribe(
        port: Int,
        clientID: String,
        username: String,
        password: String,
        topic: String,
        extra: [String] = []
    ) throws -> Running {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("mosquitto-\(UUID().uuidString).out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: subscriber!)
        process.arguments =
            [
                "-h", "127.0.0.1", "-p", "\(port)", "-V", "mqttv311", "-i", clientID, "-u", username, "-P", password,
                "-t", topic, "-q", "1", "-C", "1", "-W", "10",
            ] + extra
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        return Running(process: process, output: output)
    }
}
