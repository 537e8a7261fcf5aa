import Crypto
import Foundation
import HeraldAPNs
import HeraldAPNsSandbox
import HeraldCore
import Logging
import NIOConcurrencyHelpers
import SwiftASN1
import X509

/// A clock tests move by hand: token age is judged by it, nothing sleeps.
final class ManualClock: Sendable {
    private let current: NIOLockedValueBox<Date>

    init(_ start: Date = Date()) {
        current = NIOLockedValueBox(start)
    }

    var now: Date { current.withLockedValue { $0 } }

    func advance(by interval: TimeInterval) {
        current.withLockedValue { $0 += interval }
    }
}

enum TestAuth {
    case token
    /// A key the sandbox doesn't know.
    case unregisteredToken
    case certificate
}

let testBundleID = "com.example.app"
let testKeyID = "KEY1234567"
let testTeamID = "TEAM123456"

func deviceToken(_ seed: Int) -> String {
    String(repeating: String(format: "%08x", seed), count: 8)
}

func alert(_ text: String, to token: String = deviceToken(1), collapseID: String? = nil) -> APNsNotification {
    APNsNotification(deviceToken: token, payload: Array(#"{"aps":{"alert":"\#(text)"}}"#.utf8), collapseID: collapseID)
}

/// Starts a sandbox on port 0 and a client pointed at it, runs `body`, and tears both down.
func withSandboxAndClient(
    auth: TestAuth = .token,
    transport: APNsSandbox.Configuration.Transport = .tls,
    clientClock: ManualClock? = nil,
    sandboxClock: ManualClock? = nil,
    connectionCount: Int? = nil,
    requestTimeout: Duration? = nil,
    logger: Logger = Logger(label: "test"),
    configure: (inout APNsClient.Configuration) -> Void = { _ in },
    _ body: (APNsSandbox, APNsClient) async throws -> Void
) async throws {
    var sandboxConfiguration = APNsSandbox.Configuration(transport: transport)
    if let sandboxClock { sandboxConfiguration.now = { sandboxClock.now } }
    let sandbox = try await APNsSandbox.start(configuration: sandboxConfiguration)

    let credentials: APNsCredentials
    switch auth {
    case .token, .unregisteredToken:
        let key = P256.Signing.PrivateKey()
        if case .token = auth {
            sandbox.registerSigningKey(keyID: testKeyID, teamID: testTeamID, publicKey: key.publicKey)
        }
        credentials = APNsCredentials(
            auth: .token(keyID: testKeyID, teamID: testTeamID, privateKeyPEM: key.pemRepresentation),
            bundleID: testBundleID,
            environment: .sandbox
        )
    case .certificate:
        let (certificate, key) = try makeClientCertificate()
        try sandbox.trustClientCertificate(pem: certificate)
        credentials = APNsCredentials(
            auth: .certificate(certificatePEM: certificate, privateKeyPEM: key),
            bundleID: testBundleID,
            environment: .sandbox
        )
    }

    var configuration = APNsClient.Configuration(
        host: "localhost",
        port: sandbox.port,
        transport: transport == .tls ? .tlsTrusting(certificatePEMs: [sandbox.certificatePEM!]) : .plaintext
    )
    configuration.reconnectBackoff = (.milliseconds(10), .milliseconds(200))
    configuration.retryBackoff = .milliseconds(10)
    if let clientClock { configuration.now = { clientClock.now } }
    if let connectionCount { configuration.connectionCount = connectionCount }
    if let requestTimeout { configuration.requestTimeout = requestTimeout }
    configure(&configuration)
    let client = try APNsClient(credentials: credentials, configuration: configuration, logger: logger)

    do {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await client.run() }
            defer { group.cancelAll() }
            try await body(sandbox, client)
        }
    } catch {
        await sandbox.shutdown()
        throw error
    }
    await sandbox.shutdown()
}

/// A client certificate and key, as an app's APNs certificate would be.
func makeClientCertificate() throws -> (certificate: String, privateKey: String) {
    let key = P256.Signing.PrivateKey()
    let certificateKey = Certificate.PrivateKey(key)
    let name = try DistinguishedName {
        CommonName("Apple Push Services: \(testBundleID)")
        OrganizationName("Herald Tests")
    }
    let certificate = try Certificate(
        version: .v3,
        serialNumber: Certificate.SerialNumber(),
        publicKey: certificateKey.publicKey,
        notValidBefore: Date().addingTimeInterval(-3600),
        notValidAfter: Date().addingTimeInterval(86400),
        issuer: name,
        subject: name,
        signatureAlgorithm: .ecdsaWithSHA256,
        extensions: try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
            KeyUsage(digitalSignature: true, keyCertSign: true)
            try ExtendedKeyUsage([.clientAuth])
        },
        issuerPrivateKey: certificateKey
    )
    return (try certificate.serializeAsPEM().pemString, key.pemRepresentation)
}

/// Polls `condition` until it holds; fails after 30 s rather than hold the test forever.
func waitUntil(_ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(30)
    while !condition() {
        guard ContinuousClock.now < deadline else { throw SandboxTimeout() }
        try await Task.sleep(for: .milliseconds(5))
    }
}

struct SandboxTimeout: Error, CustomStringConvertible {
    var description: String { "the condition did not hold within 30 s" }
}

/// Keeps every log record, so a test can count what was logged.
final class RecordingLogHandler: LogHandler, Sendable {
    struct Record: Sendable {
        var level: Logger.Level
        var message: String
    }

    private let box = NIOLockedValueBox<(records: [Record], metadata: Logger.Metadata, level: Logger.Level)>(([], [:], .debug))

    var records: [Record] { box.withLockedValue { $0.records } }

    var metadata: Logger.Metadata {
        get { box.withLockedValue { $0.metadata } }
        set { box.withLockedValue { $0.metadata = newValue } }
    }

    var logLevel: Logger.Level {
        get { box.withLockedValue { $0.level } }
        set { box.withLockedValue { $0.level = newValue } }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(
        level: Logger.Level,
        message: Logger.Message,
        metadata: Logger.Metadata?,
        source: String,
        file: String,
        function: String,
        line: UInt
    ) {
        box.withLockedValue { $0.records.append(Record(level: level, message: message.description)) }
    }
}
