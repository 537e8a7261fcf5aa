import ArgumentParser
import Foundation
import HeraldAPNsSandbox
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import UnixSignals

/// `apns-sandbox`: a conformant APNs server for local runs and benchmarks, with an
/// HTTP/1.1 JSON endpoint to inspect what it received and to register signing keys.
@main
struct APNsSandboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apns-sandbox",
        abstract: "Runs a conformant APNs server (HTTP/2, TLS with a self-signed certificate, or h2c).",
        discussion: """
            Inspection endpoint: GET /notifications, DELETE /notifications, GET /devices/{token},
            GET /rejections, GET /stats, GET /certificate, POST /keys {"key_id","team_id","public_key_pem"}.
            """
    )

    @Option(help: "Address to bind, for APNs and the inspection endpoint.")
    var host = "127.0.0.1"

    @Option(help: "APNs port (0 picks a free one).")
    var port = 2197

    @Flag(help: "Serve HTTP/2 without TLS (h2c, prior knowledge).")
    var plaintext = false

    @Option(help: "Where to write the self-signed certificate PEM (default: a file in the temporary directory).")
    var certificateOut: String?

    @Option(help: "Inspection endpoint port (0 picks a free one).")
    var inspectPort = 2198

    @Option(help: "SETTINGS_MAX_CONCURRENT_STREAMS once a connection had a request accepted.")
    var maxConcurrentStreams = 1000

    @Option(help: "Event-loop threads (default: one per core).")
    var threads: Int?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "herald.apns-sandbox")

        let (sandbox, inspection) = try await buildSandbox(logger: logger)
        let transport = plaintext ? "h2c" : "tls"
        var certificatePath = "-"
        if let pem = sandbox.certificatePEM {
            certificatePath =
                certificateOut
                ?? FileManager.default.temporaryDirectory.appendingPathComponent("apns-sandbox-\(sandbox.port).pem").path
            try pem.write(toFile: certificatePath, atomically: true, encoding: .utf8)
        }
        var lines = ["APNs sandbox (HTTP/2, \(plaintext ? "h2c" : "TLS, ALPN h2")) on \(host):\(sandbox.port)"]
        if !plaintext { lines.append("Certificate PEM written to \(certificatePath)") }
        lines.append("Inspection endpoint on http://\(host):\(inspection.port)/notifications")
        // One line for tools that start the sandbox and read where it is.
        lines.append("apns-sandbox ready port=\(sandbox.port) transport=\(transport) inspect-port=\(inspection.port) certificate=\(certificatePath)")
        // Written unbuffered: a parent process waits for these lines on a pipe.
        FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))

        let group = ServiceGroup(
            configuration: .init(services: [sandbox, inspection], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        )
        try await group.run()
    }

    /// Starts the sandbox and binds its inspection endpoint.
    func buildSandbox(logger: Logger) async throws -> (APNsSandbox, SandboxInspectionServer) {
        var configuration = APNsSandbox.Configuration(transport: plaintext ? .plaintext : .tls, port: port)
        configuration.host = host
        configuration.maxConcurrentStreams = maxConcurrentStreams
        let group: any EventLoopGroup =
            threads.map { MultiThreadedEventLoopGroup(numberOfThreads: max(1, $0)) } ?? MultiThreadedEventLoopGroup.singleton
        let sandbox = try await APNsSandbox.start(configuration: configuration, eventLoopGroup: group, logger: logger)
        do {
            let inspection = try await SandboxInspectionServer.bind(
                sandbox: sandbox,
                host: host,
                port: inspectPort,
                eventLoopGroup: group,
                logger: logger
            )
            return (sandbox, inspection)
        } catch {
            await sandbox.shutdown()
            throw error
        }
    }
}
