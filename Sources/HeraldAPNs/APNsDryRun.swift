import Foundation
import HeraldCore
import Logging

/// APNs credentials tried before they are saved: one silent request with them, for a
/// device token no device has, where the center would send (Apple, or the local sandbox).
/// APNs answers such a request "bad device token" (or, the sandbox, delivers it) only when
/// it takes the provider token or certificate; a key it doesn't know, a team it doesn't
/// match or a topic the key may not send to is refused with its reason.
public struct APNsDryRun: Sendable {
    let routing: APNsRouting
    let timeout: Duration

    public init(routing: APNsRouting, timeout: Duration = .seconds(10)) {
        self.routing = routing
        self.timeout = timeout
    }

    /// Nil when APNs took `credentials`, else why not (as an operator reads it).
    public func refusal(of credentials: APNsCredentials) async -> String? {
        if case .sandbox(let target) = routing {
            do { try target.admit(credentials) } catch { return "the APNs sandbox refused them: \(error)" }
        }
        var configuration = routing.clientConfiguration(environment: credentials.environment)
        configuration.connectionCount = 1
        configuration.maxAttempts = 1
        configuration.requestTimeout = timeout
        configuration.connectTimeout = timeout
        var logger = Logger(label: "herald.apns.dry-run")
        logger.logLevel = .warning
        let client: APNsClient
        do {
            client = try APNsClient(credentials: credentials, configuration: configuration, logger: logger)
        } catch {
            return "they can't be used: \(error)"
        }
        // Silent (background, priority 5): nothing would show even on a device.
        let probe = APNsNotification(
            deviceToken: String(repeating: "0", count: 64),
            pushType: .background,
            payload: Array(#"{"aps":{"content-available":1}}"#.utf8),
            priority: APNsPriority(rawValue: 5)
        )
        do {
            let outcome = try await withThrowingTaskGroup(of: APNsOutcome?.self) { group in
                group.addTask {
                    try await client.run()
                    return nil
                }
                defer { group.cancelAll() }
                return try await client.send(probe)
            }
            switch outcome {
            case .delivered, .invalidToken: return nil
            case .credentialsRefused(let reason), .credentialsBroken(let reason): return "APNs refused them: \(reason)"
            case .failed(let reason, let status): return "APNs answered \(status) \(reason)"
            case .retryLater(let reason, _), .circuitOpen(let reason, _): return "APNs did not take the request: \(reason)"
            }
        } catch {
            return "APNs could not be reached (\(configuration.host):\(configuration.port)): \(error)"
        }
    }
}
