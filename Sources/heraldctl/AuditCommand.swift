import ArgumentParser
import Foundation

/// `heraldctl audit`: the audit log (admin token): read it, and check its chain.
struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Read the audit log and verify its chain (admin token; docs/security.md).",
        discussion: """
            Examples:
              heraldctl audit list --app 0123456789abcdef01234567 --action "POST /v3/push"
              heraldctl audit verify
            """,
        subcommands: [List.self, Verify.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List entries, oldest first (one page; --after for the next).")

        @Option(name: .customLong("app"), help: "Only this app's entries.") var appKey: String?
        @Option(help: "Only this actor (master_secret, key:hk_…, admin_token, admin_key:hka_…).") var actor: String?
        @Option(help: "Only this route, e.g. \"POST /v3/push\".") var action: String?
        @Option(help: "Entries after this id.") var after: Int64?
        @Option(help: "At most this many (1 to 1000).") var limit = 100

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            var query: [String: String] = ["limit": String(limit)]
            query["app_key"] = appKey
            query["actor"] = actor
            query["action"] = action
            query["after"] = after.map(String.init)
            let client = try connection.client()
            let response = try await client.get("/admin/v1/audit", query: query, .admin)
            try output.emit(response) { () throws(CLIError) in
                let page = try response.decode(AuditPageModel.self, url: client.connection.displayURL)
                var table = TableRenderer(["ID", "AT", "APP", "ACTOR", "ACTION", "STATUS", "FROM"])
                for entry in page.entries {
                    table.append([
                        String(entry.id), entry.at, entry.appKey ?? "-", entry.actor, entry.action, String(entry.status), entry.address ?? "-",
                    ])
                }
                return table.render() + (page.next.map { "\nmore: --after \($0)" } ?? "")
            }
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the chain from the first entry; exit status 1 and the entry named when one was altered or removed."
        )

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            let response = try await client.get("/admin/v1/audit/verify", .admin)
            let result = try response.decode(AuditVerificationModel.self, url: client.connection.displayURL)
            try output.emit(response) { () throws(CLIError) in
                guard let broken = result.firstBrokenID else { return "intact: \(result.checked) entries chain correctly" }
                return "BROKEN at entry \(broken): it was altered, or one before it removed (\(result.checked) entries chain correctly before it)"
            }
            if let broken = result.firstBrokenID { throw CLIError.failed("the audit log's chain is broken at entry \(broken)") }
        }
    }
}

struct AuditPageModel: Decodable {
    struct Entry: Decodable {
        var id: Int64
        var at: String
        var appKey: String?
        var actor: String
        var action: String
        var status: Int
        var address: String?

        enum CodingKeys: String, CodingKey {
            case id, at, actor, action, status, address
            case appKey = "app_key"
        }
    }

    var entries: [Entry]
    var next: Int64?
}

struct AuditVerificationModel: Decodable {
    var intact: Bool
    var checked: Int
    var firstBrokenID: Int64?

    enum CodingKeys: String, CodingKey {
        case intact, checked
        case firstBrokenID = "first_broken_id"
    }
}
