import ArgumentParser
import Foundation
import HeraldCore
import HeraldFCM
import Logging

/// `heraldctl fcm`: FCM itself, without Herald in between.
struct FCMToolCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fcm",
        abstract: "Check a Firebase service account, or send one message straight to FCM (no server needed).",
        subcommands: [FCMSendCommand.self, FCMDoctorCommand.self]
    )
}

/// What both FCM commands take: the key file and where FCM is.
struct FCMOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The service account's JSON key file (Firebase console: Service accounts).", valueName: "file"))
    var serviceAccount: String
    @Option(help: "The Firebase project the key must be for (checked when given).") var project: String?
    @Option(
        help: ArgumentHelp(
            "Another FCM-compatible server, such as Herald's FCM sandbox: its base URL, for both the token exchange and the send.",
            valueName: "url"
        )
    )
    var server: String?
    @Option(help: ArgumentHelp("With --server: trust this PEM certificate (a sandbox's self-signed one).", valueName: "file"))
    var caFile: String?

    func validate() throws {
        if caFile != nil, server == nil { throw ValidationError("--ca-file goes with --server.") }
        if let server, URL(string: server)?.scheme != "https" { throw ValidationError("--server must be an https URL; got '\(server)'.") }
    }

    /// The key file, checked as the admin API checks an uploaded one.
    func account() throws(CLIError) -> FCMServiceAccount {
        guard let data = FileManager.default.contents(atPath: serviceAccount) else {
            throw .usage("--service-account: cannot read \(serviceAccount)")
        }
        do {
            return try FCMServiceAccount.parse(data, expectedProjectID: project)
        } catch {
            throw .usage("--service-account: \(error.message)")
        }
    }

    func client() throws(CLIError) -> FCMClient {
        var logger = Logger(label: "heraldctl.fcm")
        logger.logLevel = .critical
        guard let server else { return FCMClient(endpoints: .google, logger: logger) }
        var trusted: [String] = []
        if let caFile {
            guard let pem = FileManager.default.contents(atPath: caFile) else { throw .usage("--ca-file: cannot read \(caFile)") }
            trusted = [String(decoding: pem, as: UTF8.self)]
        }
        let base = server.hasSuffix("/") ? String(server.dropLast()) : server
        return FCMClient(endpoints: .init(sendBase: base, tokenURL: base + "/token", trustedCertificatePEMs: trusted), logger: logger)
    }
}

/// `heraldctl fcm send`: the first thing an Android developer does with a new key file or
/// token. Sends one message with the client the message center uses and prints FCM's
/// answer, classified as the center classifies it.
struct FCMSendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send one message to one FCM registration token and print FCM's answer.",
        discussion: """
            Exit status 0 when FCM took it, 1 when it refused it (what Herald would do is printed), \
            69 when FCM could not be reached, 64 for bad usage or a key file that doesn't load.
            Example:
              heraldctl fcm send --service-account shop-firebase-adminsdk.json --token $FCM_TOKEN \\
                --title "Hello" --body "From heraldctl" --data order=42
            """
    )

    @OptionGroup var fcm: FCMOptions
    @Option(help: ArgumentHelp("The device's FCM registration token.", valueName: "token")) var token: String
    @Option(help: "The notification's title.") var title: String?
    @Option(help: "The notification's text.") var body: String?
    @Option(help: ArgumentHelp("A data field (repeatable); without --title or --body, a data-only message.", valueName: "key=value"))
    var data: [String] = []
    @Option(help: "The Android notification channel.") var channelID: String?
    @Option(help: "The collapse key (Herald sends a push's identifier).") var collapseKey: String?
    @Flag(help: "Print the answer as JSON.") var json = false

    func validate() throws {
        if title == nil, body == nil, data.isEmpty { throw ValidationError("Nothing to send: give --title, --body or --data.") }
        if let bad = data.first(where: { !$0.contains("=") }) { throw ValidationError("--data takes key=value; got '\(bad)'.") }
    }

    /// The message as a push would render it (``FCMMessage``).
    func message() throws(CLIError) -> FCMMessage {
        var android: [String: Any] = [:]
        if let title { android["title"] = title }
        if let channelID { android["channel_id"] = channelID }
        var extras: [String: String] = [:]
        for field in data {
            let parts = field.split(separator: "=", maxSplits: 1)
            extras[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        var request: [String: Any] = ["platform": "android", "audience": "all"]
        if title != nil || body != nil {
            android["alert"] = body ?? ""
            if !extras.isEmpty { android["extras"] = extras }
            request["notification"] = ["android": android]
        } else {
            request["message"] = ["msg_content": "", "extras": extras]
        }
        if let collapseKey { request["options"] = ["identifier": collapseKey] }
        do {
            let push = try JSONDecoder().decode(HeraldCore.PushRequest.self, from: try JSONSerialization.data(withJSONObject: request)).validated()
            return FCMMessage(push: push, msgID: "heraldctl", token: token, expiresAt: Date().addingTimeInterval(86400))
        } catch let error as HeraldError {
            throw .usage(error.message)
        } catch {
            throw .usage("\(error)")
        }
    }

    func run() async throws {
        let account = try fcm.account()
        let message = try message()
        let client = try fcm.client()
        let outcome = await client.send(message, account: account)
        try? await client.shutdown()
        let answer = FCMAnswer(outcome)
        if json {
            Terminal.printRaw(try JSONEncoder.sorted.encode(answer))
        } else {
            Terminal.print(TableRenderer.fields(answer.fields))
        }
        switch outcome {
        case .delivered: return
        case .retryLater(let reason, _) where reason == "Unreachable" || reason.contains("unavailable"):
            throw CLIError.unreachable("FCM", url: fcm.server ?? FCMClient.Endpoints.google.sendBase, reason: reason)
        default: throw ExitCode(1)
        }
    }
}

/// `heraldctl fcm doctor`: whether a key file works, before anything is uploaded.
struct FCMDoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check a service account's key file: its fields, its key, and Google's token endpoint.",
        discussion: """
            Exit status 0 when the token endpoint issued an access token, 1 when it refused the key \
            file (Google's reason is printed), 69 when it could not be reached, 64 for a file that \
            doesn't load.
            """
    )

    @OptionGroup var fcm: FCMOptions
    @Flag(help: "Print the findings as JSON.") var json = false

    func run() async throws {
        let account = try fcm.account()
        let client = try fcm.client()
        var findings: [(String, String)] = [
            ("key_file", "ok: a service account of project \(account.projectID), RSA key that signs"),
            ("client_email", account.clientEmail), ("private_key_id", account.privateKeyID),
        ]
        var failure: (any Error)?
        do {
            _ = try await client.accessToken(for: account)
            findings.append(("token_endpoint", "ok: an access token for \(FCMAssertion.scope)"))
        } catch let error as FCMCredentialError {
            failure = error
            switch error {
            case .refused(let reason):
                findings.append(("token_endpoint", "refused: \(reason). Make a new key in Firebase's console (Service accounts)."))
            case .unavailable(let reason):
                findings.append(("token_endpoint", "unreachable: \(reason)"))
            }
        }
        try? await client.shutdown()
        if json {
            Terminal.printRaw(try JSONEncoder.sorted.encode(Dictionary(findings, uniquingKeysWith: { $1 })))
        } else {
            Terminal.print(TableRenderer.fields(findings))
        }
        switch failure {
        case nil: return
        case FCMCredentialError.unavailable(let reason)?: throw CLIError.unreachable("FCM", url: fcm.server ?? account.tokenURI, reason: reason)
        default: throw ExitCode(1)
        }
    }
}

/// FCM's answer as `fcm send` prints it, with what the message center would do.
struct FCMAnswer: Encodable {
    var outcome: String
    var name: String?
    var reason: String?
    var retryAfterSeconds: Int?
    var advice: String

    enum CodingKeys: String, CodingKey {
        case outcome, name, reason, advice
        case retryAfterSeconds = "retry_after_seconds"
    }

    init(_ outcome: FCMOutcome) {
        switch outcome {
        case .delivered(let name):
            self.outcome = "delivered"
            self.name = name
            advice = "FCM took it for the device."
        case .tokenDead(let reason):
            self.outcome = "token_dead"
            self.reason = reason
            advice = "The token is no longer valid (the app was uninstalled, or the token is for another project): Herald removes it."
        case .retryLater(let reason, let after):
            self.outcome = "retry_later"
            self.reason = reason
            retryAfterSeconds = after.map { Int($0.components.seconds) }
            advice = "FCM could not take it now: Herald keeps the copy and tries again then."
        case .credentialsRefused(let reason):
            self.outcome = "credentials_refused"
            self.reason = reason
            advice = "FCM refused the service account: Herald stops sending for the app until new credentials are uploaded."
        case .failed(let reason, _):
            self.outcome = "failed"
            self.reason = reason
            advice = "FCM refused the message itself (its fields or size)."
        }
    }

    var fields: [(String, String)] {
        var pairs = [("outcome", outcome)]
        if let name { pairs.append(("name", name)) }
        if let reason { pairs.append(("reason", reason)) }
        if let retryAfterSeconds { pairs.append(("retry_after", "\(retryAfterSeconds) s")) }
        pairs.append(("advice", advice))
        return pairs
    }
}
