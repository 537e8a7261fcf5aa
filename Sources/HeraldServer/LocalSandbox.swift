import HeraldAPNs
import HeraldAPNsSandbox
import HeraldCenter
import HeraldCore
import HeraldFCMSandbox
import HeraldNode
import HeraldSMS
import Logging
import ServiceLifecycle

/// The APNs sandbox `herald serve` starts when no Apple credentials are to be used (the
/// embedded default): APNs traffic goes there, over TLS, and what it received is shown at
/// its inspection endpoint, with the SMS sandbox the SMS fallback goes to (`/sms`).
struct LocalSandbox: Sendable {
    let sandbox: APNsSandbox
    let sms: SMSSandbox
    let inspection: SandboxInspectionServer
    let routing: APNsRouting

    var services: [any Service] { [sandbox, inspection] }
    var inspectPort: Int { inspection.port }

    static func start(_ configuration: HeraldConfiguration, logger: Logger) async throws -> LocalSandbox {
        var sandboxLogger = logger
        sandboxLogger[metadataKey: "herald.component"] = "apns-sandbox"
        let sandbox: APNsSandbox
        let sms = SMSSandbox()
        let inspection: SandboxInspectionServer
        do {
            sandbox = try await APNsSandbox.start(
                configuration: .init(transport: .tls, port: configuration.apnsSandboxPort),
                logger: sandboxLogger
            )
            inspection = try await SandboxInspectionServer.bind(
                sandbox: sandbox,
                resources: [SMSSandboxInspection(sandbox: sms)],
                port: configuration.apnsSandboxInspectPort,
                logger: sandboxLogger
            )
        } catch {
            throw StartupError(
                "apns.sandboxPort: could not start the APNs sandbox on ports \(configuration.apnsSandboxPort)/\(configuration.apnsSandboxInspectPort) (\(error)); set HERALD_APNS_SANDBOX_PORT or HERALD_APNS_SANDBOX=off"
            )
        }
        return LocalSandbox(sandbox: sandbox, sms: sms, inspection: inspection, routing: .localSandbox(sandbox))
    }

    /// The FCM sandbox `herald serve` starts when `fcm.sandbox` is on (the embedded
    /// default): FCM traffic goes there, each app's service account admitted as it is used.
    /// It lives as long as the process.
    static func startFCM(_ configuration: HeraldConfiguration) async throws -> FCMSandbox {
        do {
            return try await FCMSandbox.start(port: configuration.fcmSandboxPort)
        } catch {
            throw StartupError(
                "fcm.sandboxPort: could not start the FCM sandbox on port \(configuration.fcmSandboxPort) (\(error)); set HERALD_FCM_SANDBOX_PORT or HERALD_FCM_SANDBOX=off"
            )
        }
    }
}
