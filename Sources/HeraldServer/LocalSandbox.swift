import HeraldAPNs
import HeraldAPNsSandbox
import HeraldCenter
import HeraldCore
import Logging
import ServiceLifecycle

/// The APNs sandbox `herald serve` starts when no Apple credentials are to be used (the
/// embedded default): APNs traffic goes there, over TLS, and what it received is shown at
/// its inspection endpoint.
struct LocalSandbox: Sendable {
    let sandbox: APNsSandbox
    let inspection: SandboxInspectionServer
    let routing: APNsRouting

    var services: [any Service] { [sandbox, inspection] }
    var inspectPort: Int { inspection.port }

    static func start(_ configuration: HeraldConfiguration, logger: Logger) async throws -> LocalSandbox {
        var sandboxLogger = logger
        sandboxLogger[metadataKey: "herald.component"] = "apns-sandbox"
        let sandbox: APNsSandbox
        let inspection: SandboxInspectionServer
        do {
            sandbox = try await APNsSandbox.start(
                configuration: .init(transport: .tls, port: configuration.apnsSandboxPort),
                logger: sandboxLogger
            )
            inspection = try await SandboxInspectionServer.bind(sandbox: sandbox, port: configuration.apnsSandboxInspectPort, logger: sandboxLogger)
        } catch {
            throw StartupError(
                "apns.sandboxPort: could not start the APNs sandbox on ports \(configuration.apnsSandboxPort)/\(configuration.apnsSandboxInspectPort) (\(error)); set HERALD_APNS_SANDBOX_PORT or HERALD_APNS_SANDBOX=off"
            )
        }
        let target = APNsRouting.SandboxTarget(
            host: "127.0.0.1",
            port: sandbox.port,
            transport: .tlsTrusting(certificatePEMs: [sandbox.certificatePEM ?? ""]),
            admit: { credentials in
                switch credentials.auth {
                case .token(let keyID, let teamID, let privateKeyPEM):
                    try sandbox.registerSigningKey(keyID: keyID, teamID: teamID, privateKeyPEM: privateKeyPEM)
                case .certificate(let certificatePEM, _):
                    try sandbox.trustClientCertificate(pem: certificatePEM)
                }
            }
        )
        return LocalSandbox(sandbox: sandbox, inspection: inspection, routing: .sandbox(target))
    }
}
