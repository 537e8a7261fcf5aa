import ArgumentParser
import Foundation
import HeraldAPNs
import HeraldCore
import Logging

/// `heraldctl apns`: APNs itself, without Herald in between.
struct APNsToolCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apns",
        abstract: "Send one notification straight to APNs with your credentials and a device token (no server needed).",
        subcommands: [APNsSendCommand.self]
    )
}

/// `heraldctl apns send`: the first thing an iOS developer does with a new key or token.
/// Sends one notification with the client the message center uses and prints Apple's
/// answer with what it means (``APNsAdvice``).
struct APNsSendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send one notification to one device token and print Apple's answer.",
        discussion: """
            Credentials: --p8 with --key-id and --team-id (token auth), or --certificate with \
            --key. The topic is the app's bundle id. Exit status 0 when APNs accepted it, 1 when \
            it refused it (the reason and what to check are printed), 69 when it could not be \
            reached, 64 for bad usage or credentials that don't load.
            Examples:
              heraldctl apns send --token $TOKEN --p8 AuthKey_ABC123DEFG.p8 --key-id ABC123DEFG \\
                --team-id DEF123GHIJ --topic com.example.app --alert "Hello"
              heraldctl apns send --token $TOKEN --certificate cert.pem --key key.pem \\
                --topic com.example.app --environment production --background
            """
    )

    enum Environment: String, ExpressibleByArgument, CaseIterable {
        case sandbox, production
    }

    @Option(help: ArgumentHelp("The device token, hex.", valueName: "hex")) var token: String
    @Option(help: ArgumentHelp("The app's bundle id.", valueName: "bundle-id")) var topic: String
    @Option(help: "Which APNs: sandbox (apps run from Xcode) or production (TestFlight, App Store).") var environment = Environment.sandbox

    @Option(help: ArgumentHelp("The token key (.p8 file).", valueName: "file")) var p8: String?
    @Option(help: "The key's 10-character id.") var keyID: String?
    @Option(help: "Your 10-character team id.") var teamID: String?
    @Option(help: ArgumentHelp("An APNs certificate, PEM.", valueName: "file")) var certificate: String?
    @Option(help: ArgumentHelp("The certificate's private key, PEM.", valueName: "file")) var key: String?

    @Option(help: "The notification's text.") var alert: String?
    @Option(help: "Its title.") var title: String?
    @Option(help: "Its subtitle.") var subtitle: String?
    @Option(help: "The app icon's badge.") var badge: Int?
    @Option(help: "A sound of the app, or `default`.") var sound: String?
    @Flag(help: "A background push: content-available, no alert.") var background = false
    @Flag(help: "A VoIP push (PushKit; topic <bundle-id>.voip).") var voip = false
    @Option(help: ArgumentHelp("Send this JSON file as the whole payload instead.", valueName: "file")) var payload: String?
    @Option(help: "The APNs priority: 10, 5 or 1.") var priority: Int?
    @Option(help: "The apns-collapse-id.") var collapseID: String?

    @Option(
        help: ArgumentHelp(
            "Another APNs-compatible server, such as Herald's sandbox (default: Apple's for the environment).",
            valueName: "host:port"
        )
    )
    var server: String?
    @Flag(help: "With --server: HTTP/2 without TLS (Herald's local sandbox).") var plaintext = false
    @Option(help: ArgumentHelp("With --server: trust this PEM certificate (a sandbox's self-signed one).", valueName: "file"))
    var caFile: String?
    @Option(help: "Seconds to wait for Apple's answer.") var timeout: Double = 15

    @Flag(help: "Print the answer as JSON.") var json = false

    func validate() throws {
        let tokenAuth = p8 != nil || keyID != nil || teamID != nil
        let certificateAuth = certificate != nil || key != nil
        if tokenAuth == certificateAuth {
            throw ValidationError("Give --p8, --key-id and --team-id (token auth), or --certificate and --key.")
        }
        if tokenAuth, p8 == nil || keyID == nil || teamID == nil { throw ValidationError("Token auth needs --p8, --key-id and --team-id.") }
        if certificateAuth, certificate == nil || key == nil { throw ValidationError("Certificate auth needs --certificate and --key.") }
        if background, voip { throw ValidationError("--background and --voip are exclusive.") }
        if payload == nil, !background, alert == nil, title == nil, badge == nil, sound == nil, !voip {
            throw ValidationError("Nothing to send: give --alert, --title, --badge, --sound, --background, --voip or --payload.")
        }
        if let priority, ![1, 5, 10].contains(priority) { throw ValidationError("--priority must be 10, 5 or 1.") }
        if plaintext || caFile != nil, server == nil { throw ValidationError("--plaintext and --ca-file go with --server.") }
        if let server, Self.hostAndPort(server) == nil { throw ValidationError("--server must be host:port; got '\(server)'.") }
        if timeout <= 0 { throw ValidationError("--timeout must be more than 0 seconds.") }
    }

    static func hostAndPort(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else {
            return nil
        }
        let host = String(text[..<colon])
        return host.isEmpty ? nil : (host, port)
    }

    private func read(_ path: String) throws(CLIError) -> String {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw .usage("cannot read \(path)")
        }
        return text
    }

    /// The credentials, checked as the admin API checks uploaded ones: a key that doesn't
    /// load is explained before anything is sent.
    func credentials() throws(CLIError) -> APNsCredentials {
        let environment: APNsEnvironment = environment == .production ? .production : .sandbox
        do {
            if let p8, let keyID, let teamID {
                return try APNsCredentialValidator.tokenCredentials(
                    keyID: keyID,
                    teamID: teamID,
                    privateKeyPEM: try read(p8),
                    bundleID: topic,
                    environment: environment
                )
            }
            return try APNsCredentialValidator.certificateCredentials(
                certificatePEM: try read(certificate ?? ""),
                privateKeyPEM: try read(key ?? ""),
                bundleID: topic,
                environment: environment
            )
        } catch let error as HeraldError {
            throw .usage(error.message)
        } catch let error as CLIError {
            throw error
        } catch {
            throw .usage("\(error)")
        }
    }

    /// The payload: the file, else one built from the content flags.
    func body() throws(CLIError) -> [UInt8] {
        if let payload { return Array(try read(payload).utf8) }
        var aps: [String: Any] = [:]
        if background {
            aps["content-available"] = 1
        } else {
            var alertFields: [String: Any] = [:]
            if let title { alertFields["title"] = title }
            if let subtitle { alertFields["subtitle"] = subtitle }
            if let alert { alertFields["body"] = alert }
            if !alertFields.isEmpty { aps["alert"] = alertFields }
            if let badge { aps["badge"] = badge }
            if let sound { aps["sound"] = sound }
        }
        guard let data = try? JSONSerialization.data(withJSONObject: ["aps": aps], options: [.sortedKeys]) else {
            throw .usage("cannot write the payload")
        }
        return Array(data)
    }

    func run() async throws {
        let credentials = try credentials()
        var configuration: APNsClient.Configuration
        if let server, let (host, port) = Self.hostAndPort(server) {
            let transport: APNsClient.Configuration.Transport =
                plaintext ? .plaintext : try caFile.map { .tlsTrusting(certificatePEMs: [try read($0)]) } ?? .tls
            configuration = .init(host: host, port: port, transport: transport)
        } else {
            configuration = .init(environment: credentials.environment)
        }
        configuration.connectionCount = 1
        configuration.maxAttempts = 1
        configuration.requestTimeout = .milliseconds(Int64(timeout * 1000))
        configuration.connectTimeout = .milliseconds(Int64(timeout * 1000))
        var logger = Logger(label: "heraldctl.apns")
        logger.logLevel = .critical
        let client = try APNsClient(credentials: credentials, configuration: configuration, logger: logger)
        let notification = APNsNotification(
            deviceToken: token,
            pushType: voip ? .voip : background ? .background : .alert,
            payload: try body(),
            priority: priority.flatMap(APNsPriority.init(rawValue:)),
            collapseID: collapseID
        )
        let outcome: APNsOutcome
        do {
            outcome = try await withThrowingTaskGroup(of: APNsOutcome?.self) { group in
                group.addTask {
                    try await client.run()
                    return nil
                }
                defer { group.cancelAll() }
                return try await client.send(notification)
            }
        } catch let error as APNsError where error.isRetryable {
            // No answer (a hang, no server, connections closing): unreachable, as the help says.
            throw CLIError.unreachable("APNs", url: "\(configuration.host):\(configuration.port)", reason: "no answer (\(error.reason))")
        } catch let error as APNsError {
            throw CLIError.usage("APNs would refuse this request: \(error)")
        }
        let answer = APNsAnswer(outcome, apnsID: notification.apnsID, environment: credentials.environment)
        if json {
            Terminal.printRaw(try JSONEncoder.sorted.encode(answer))
        } else {
            Terminal.print(TableRenderer.fields(answer.fields))
        }
        switch outcome {
        case .delivered: return
        case .retryLater(let reason, _) where answer.status == nil:
            throw CLIError.unreachable("APNs", url: "\(configuration.host):\(configuration.port)", reason: "no answer (\(reason))")
        default: throw ExitCode(1)
        }
    }
}

/// Apple's answer as `apns send` prints it.
struct APNsAnswer: Encodable {
    var status: Int?
    var reason: String?
    var apnsID: String
    var timestamp: Date?
    var advice: String

    enum CodingKeys: String, CodingKey {
        case status, reason, timestamp, advice
        case apnsID = "apns_id"
    }

    init(_ outcome: APNsOutcome, apnsID: UUID, environment: APNsEnvironment) {
        self.apnsID = apnsID.uuidString
        switch outcome {
        case .delivered(let id):
            self.apnsID = id.uuidString
            status = 200
        case .invalidToken(let reason, let since):
            self.reason = reason.rawValue
            status = since == nil ? 400 : 410
            timestamp = since
        case .failed(let reason, let status):
            self.reason = reason.rawValue
            self.status = status
        case .credentialsBroken(let reason), .credentialsRefused(let reason):
            self.reason = reason.rawValue
            status = 403  // every reason of refused credentials comes with 403
        case .retryLater(let reason, _), .circuitOpen(let reason, _):
            self.reason = reason.rawValue
            status = Self.transientStatus(reason)
        }
        advice =
            status == nil
            ? "No answer from APNs (\(reason ?? "?")): check the network, --server, and that TLS can reach it."
            : APNsAdvice.explain(reason: reason, environment: environment)
    }

    /// The HTTP status of a transient reason APNs sent, nil for Herald's own (no answer).
    static func transientStatus(_ reason: APNsReason) -> Int? {
        switch reason {
        case .tooManyRequests, .tooManyProviderTokenUpdates: 429
        case .expiredProviderToken, .unrelatedKeyIdInToken: 403
        case .idleTimeout: 400
        case .internalServerError: 500
        case .serviceUnavailable, .shutdown: 503
        default: nil
        }
    }

    var fields: [(String, String)] {
        var fields = [("status", status.map(String.init) ?? "no answer"), ("reason", reason ?? "-"), ("apns_id", apnsID)]
        if let timestamp { fields.append(("timestamp", ISO8601DateFormatter().string(from: timestamp))) }
        fields.append(("advice", advice))
        return fields
    }
}

extension JSONEncoder {
    static let sorted: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()
}
