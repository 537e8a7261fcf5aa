import Crypto
import Foundation
import HeraldCore

/// Everything the sandbox knows: registered keys and devices, faults, and what it
/// received. A value type guarded by the sandbox's lock, so its rules are testable
/// without sockets.
struct SandboxState: Sendable {
    struct RegisteredKey: Sendable {
        var teamID: String
        /// The public key's x9.63 bytes (Crypto's key types aren't Sendable).
        var publicKeyX963: Data

        init(teamID: String, publicKey: P256.Signing.PublicKey) {
            self.teamID = teamID
            self.publicKeyX963 = publicKey.x963Representation
        }

        var publicKey: P256.Signing.PublicKey? { try? P256.Signing.PublicKey(x963Representation: publicKeyX963) }
    }

    var tokenLifetime: TimeInterval
    var minimumTokenChangeInterval: TimeInterval
    var recallKey: String

    var keys: [String: RegisteredKey] = [:] {
        didSet { verifiedTokens.removeAll() }
    }
    /// JWTs whose signature was verified against `keys`, so a connection's token is
    /// verified once and not on every request.
    var verifiedTokens: [String: SandboxProviderToken] = [:]
    /// Device token → the topic it was issued for. Unknown devices accept any topic.
    var deviceTopics: [String: String] = [:]
    /// ActivityKit token → the kind of token it is; only Live Activity pushes may go to one,
    /// and a Live Activity push only to one of the right kind (when the token is known).
    var liveActivityTokens: [String: SandboxLiveActivityToken] = [:]
    /// The APNs environment the sandbox plays, when it plays one.
    var environment: APNsEnvironment?
    /// Device token → the environment it was issued in: used in the other one, it is a
    /// BadDeviceToken, as at Apple.
    var deviceEnvironments: [String: APNsEnvironment] = [:]
    /// Device token → when it stopped being valid.
    var unregistered: [String: Date] = [:]
    var tokenFaults: [String: SandboxFault] = [:]
    /// The fault for every valid request without a fault of its own device.
    var everyRequestFault: SandboxFault?
    /// Faults for the next requests that pass validation, in order.
    var queuedFaults: [SandboxFault] = []
    /// After this many accepted requests in all, the next one meets a GOAWAY.
    var goAwayAfter: (count: Int, reason: String)?

    /// Every accepted notification in order; device notification centres are derived from
    /// them when asked for, so accepting one is an append.
    var records: [RecordedNotification] = []
    var rejections: [SandboxRejection] = []
    var nextConnectionID = 1
    /// Connections set up and registered (so ``APNsSandbox/dropConnections()`` reaches them).
    var acceptedConnections = 0

    init(configuration: APNsSandbox.Configuration) {
        self.tokenLifetime = configuration.tokenLifetime
        self.minimumTokenChangeInterval = configuration.minimumTokenChangeInterval
        self.recallKey = configuration.recallKey
        self.environment = configuration.environment
    }

    /// Decides the answer to `request`, in Apple's validation order, and records it when accepted.
    mutating func handle(_ request: SandboxRequest, connection: inout SandboxConnectionAuth, now: Date) -> SandboxDecision {
        let validated: ValidatedRequest
        switch validate(request, connection: &connection, now: now) {
        case .success(let value):
            validated = value
        case .failure(let rejection):
            rejections.append(
                SandboxRejection(
                    status: rejection.status,
                    reason: rejection.reason ?? "",
                    deviceToken: Self.deviceToken(inPath: request.path),
                    connectionID: connection.connectionID
                )
            )
            return SandboxDecision(action: .respond(rejection))
        }

        var fault: SandboxFault?
        if let goAway = goAwayAfter, records.count >= goAway.count {
            goAwayAfter = nil
            fault = .goAway(reason: goAway.reason)
        } else if !queuedFaults.isEmpty {
            fault = queuedFaults.removeFirst()
        } else {
            fault = tokenFaults[validated.deviceToken] ?? everyRequestFault
        }

        switch fault {
        case .reject(let status, let reason):
            rejections.append(
                SandboxRejection(
                    status: status,
                    reason: reason,
                    deviceToken: validated.deviceToken,
                    connectionID: connection.connectionID,
                    apnsID: validated.apnsID
                )
            )
            return SandboxDecision(action: .respond(SandboxResponse(status: status, apnsID: validated.apnsID, reason: reason)))
        case .neverAnswer:
            return SandboxDecision(action: .neverAnswer)
        case .goAway(let reason):
            return SandboxDecision(action: .goAway(reason: reason))
        case .delay, nil:
            break
        }

        accept(validated, connectionID: connection.connectionID, now: now)
        let raise = !connection.hasAccepted
        connection.hasAccepted = true
        if case .delay(let duration) = fault {
            return SandboxDecision(action: .respondAfter(duration, .success(validated.apnsID)), raiseStreamLimit: raise)
        }
        return SandboxDecision(action: .respond(.success(validated.apnsID)), raiseStreamLimit: raise)
    }

    private mutating func accept(_ request: ValidatedRequest, connectionID: Int, now: Date) {
        let record = RecordedNotification(
            apnsID: request.apnsID,
            deviceToken: request.deviceToken,
            topic: request.topic,
            pushType: request.pushType,
            priority: request.priority,
            expiration: request.expiration,
            collapseID: request.collapseID,
            headers: request.headers,
            providerToken: request.providerToken,
            payload: request.payload,
            connectionID: connectionID,
            receivedAt: now
        )
        records.append(record)
    }

    /// What the device with this token holds: its notifications replayed in order
    /// (a collapse id replaces the shown notification; a background push carrying recall
    /// identifiers removes those).
    func centre(for token: String) -> DeviceNotificationCentre {
        var centre = DeviceNotificationCentre()
        var shownIndex: [String: Int] = [:]
        for record in records where record.deviceToken == token {
            if record.pushType == "background" {
                centre.background.append(record)
                let recalled = Self.recalledIdentifiers(in: record, key: recallKey)
                guard !recalled.isEmpty else { continue }
                centre.shown.removeAll { recalled.contains($0.identifier) }
                shownIndex = [:]
                for (position, shown) in centre.shown.enumerated() { shownIndex[shown.identifier] = position }
            } else {
                let identifier = record.collapseID ?? record.apnsID.lowercasedString
                let shown = ShownNotification(identifier: identifier, notification: record)
                if let position = shownIndex[identifier] {
                    centre.shown[position] = shown
                } else {
                    shownIndex[identifier] = centre.shown.count
                    centre.shown.append(shown)
                }
            }
        }
        return centre
    }

    /// Forgets what was received; returns how many accepted notifications were forgotten.
    mutating func clearRecords() -> Int {
        defer {
            records.removeAll()
            rejections.removeAll()
        }
        return records.count
    }

    private static func recalledIdentifiers(in record: RecordedNotification, key: String) -> Set<String> {
        switch record.payloadJSON?[key] {
        case let identifier as String: [identifier]
        case let identifiers as [String]: Set(identifiers)
        default: []
        }
    }

    static func deviceToken(inPath path: String) -> String? {
        let prefix = "/3/device/"
        guard path.hasPrefix(prefix) else { return nil }
        return String(path.dropFirst(prefix.count))
    }
}

/// A request the sandbox refused, for tests that check what a provider sent.
public struct SandboxRejection: Sendable, Hashable {
    public var status: Int
    public var reason: String
    public var deviceToken: String?
    public var connectionID: Int
    /// The request's `apns-id`, when it passed validation.
    public var apnsID: UUID? = nil
}
