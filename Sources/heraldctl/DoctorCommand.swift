import ArgumentParser
import Foundation

/// `heraldctl doctor RID`: why a device did or did not get its pushes.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Explain why a device did or did not get its pushes.",
        discussion: """
            Looks at the device's APNs token (present, valid, its environment against the app's \
            credentials), the credentials' state, whether it is online and where, its last copies \
            with each outcome, and what quiet hours or the daily cap held back; prints the facts, \
            then the findings, problems first. Exit status 0, or 1 when a finding is a problem.
            Example: heraldctl doctor 0123456789abcdef0123
            """
    )

    @Argument(help: "The device's registration id.") var registrationID: String

    @OptionGroup(title: "Connection") var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions

    struct Diagnosis: Decodable {
        struct Token: Decodable {
            var present: Bool
            var valid: Bool
            var environment: String?
            var invalidatedAt: String?

            enum CodingKeys: String, CodingKey {
                case present, valid, environment
                case invalidatedAt = "invalidated_at"
            }
        }

        struct Credentials: Decodable {
            var type: String
            var environment: String
            var problem: String?
        }

        struct Copy: Decodable {
            var msgID: String
            var sentAt: String
            var status: String
            var reason: String?
            var opened: Bool

            enum CodingKeys: String, CodingKey {
                case status, reason, opened
                case msgID = "msg_id"
                case sentAt = "sent_at"
            }
        }

        struct Finding: Decodable {
            var level: String
            var code: String
            var message: String
        }

        var platform: String
        var online: Bool
        var node: String?
        var lastOnlineAt: String?
        var apnsToken: Token
        var apnsCredentials: Credentials?
        var recent: [Copy]
        var findings: [Finding]

        enum CodingKeys: String, CodingKey {
            case platform, online, node, recent, findings
            case lastOnlineAt = "last_online_at"
            case apnsToken = "apns_token"
            case apnsCredentials = "apns_credentials"
        }
    }

    func run() async throws {
        let client = try connection.client()
        let response = try await client.get("/v3/devices/\(APIClient.segment(registrationID))/diagnosis", .app)
        let diagnosis = try response.decode(Diagnosis.self, url: client.connection.displayURL)
        try output.emit(response) { Self.render(diagnosis) }
        if diagnosis.findings.contains(where: { $0.level == "problem" }) { throw ExitCode(1) }
    }

    static func render(_ diagnosis: Diagnosis) -> String {
        let token = diagnosis.apnsToken
        var facts: [(String, String)] = [
            ("platform", diagnosis.platform),
            ("online", diagnosis.online ? "yes, on node \(diagnosis.node ?? "?")" : "no, last online \(diagnosis.lastOnlineAt ?? "never")"),
            (
                "apns_token",
                !token.present
                    ? "none"
                    : "\(token.valid ? "valid" : "dead since \(token.invalidatedAt ?? "?")"), \(token.environment ?? "environment unknown")"
            ),
            (
                "apns_credentials",
                diagnosis.apnsCredentials.map { "\($0.type), \($0.environment)\($0.problem.map { ", refused: \($0)" } ?? "")" } ?? "none"
            ),
        ]
        for copy in diagnosis.recent {
            facts.append(
                ("copy \(copy.msgID)", "\(copy.sentAt) \(copy.status)\(copy.reason.map { " (\($0))" } ?? "")\(copy.opened ? ", opened" : "")")
            )
        }
        let order = ["problem": 0, "warning": 1, "info": 2]
        let findings = diagnosis.findings.sorted { order[$0.level, default: 3] < order[$1.level, default: 3] }
            .map { "\($0.level.uppercased()) \(TableRenderer.safe($0.code)): \(TableRenderer.safe($0.message))" }
        return TableRenderer.fields(facts) + "\n\n" + findings.joined(separator: "\n")
    }
}
