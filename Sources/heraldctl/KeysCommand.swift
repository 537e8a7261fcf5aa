import ArgumentParser
import Foundation

/// `heraldctl keys`: an app's API keys (with the app's credentials: its master secret, or
/// a key holding `keys`), or with `--admin` the admin API's keys (admin token).
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Create, list, rotate and revoke API keys (docs/security.md).",
        discussion: """
            An app's keys with the app's credentials; the admin API's keys with --admin and \
            the admin token. A key's secret is printed once, by create and rotate.
            Rotating without an outage: rotate (the old key keeps working), move clients to \
            the new secret, then revoke the old key.
            Examples:
              heraldctl keys create --name reporting --scope reports:read --range 10.0.0.0/8
              heraldctl keys list
              heraldctl keys rotate hk_3f9a0c1d2b4e
              heraldctl keys revoke hk_3f9a0c1d2b4e
              heraldctl keys create --admin --name deploy
            """,
        subcommands: [Create.self, List.self, Rotate.self, Revoke.self]
    )

    /// Where the keys are: the app's, or the admin API's.
    struct Target: ParsableArguments {
        @Flag(help: "The admin API's keys (admin token) instead of the app's.") var admin = false

        var path: String { admin ? "/admin/v1/keys" : "/v3/keys" }
        var credentials: APIClient.Credentials { admin ? .admin : .app }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a key; prints its secret (shown once).")

        @Option(help: "What the key is for.") var name: String
        @Option(
            name: .customLong("scope"),
            help: ArgumentHelp(
                "A scope (repeatable, or comma-separated): send, recall, devices:read, devices:write, schedules, categories, reports:read, events, settings, keys.",
                valueName: "scope"
            )
        )
        var scopes: [String] = []
        @Option(name: .customLong("range"), help: ArgumentHelp("A client address range it may be used from (repeatable).", valueName: "cidr"))
        var ranges: [String] = []
        @Option(help: ArgumentHelp("When it stops working (ISO 8601, e.g. 2027-01-01T00:00:00Z).", valueName: "time")) var expires: String?
        @OptionGroup var target: Target

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            struct Body: Encodable {
                var name: String
                var scopes: [String]?
                var allowedRanges: [String]?
                var expiresAt: String?

                enum CodingKeys: String, CodingKey {
                    case name, scopes
                    case allowedRanges = "allowed_ranges"
                    case expiresAt = "expires_at"
                }
            }
            let scopes = scopes.flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
            if !target.admin, scopes.isEmpty { throw ValidationError("give at least one --scope") }
            let body = Body(name: name, scopes: target.admin ? nil : scopes, allowedRanges: ranges.isEmpty ? nil : ranges, expiresAt: expires)
            let client = try connection.client()
            let response = try await client.send("POST", target.path, json: body, target.credentials)
            try output.emit(response) { () throws(CLIError) in
                try response.decode(APIKeyModel.self, url: client.connection.displayURL).created
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the keys: scopes, age, last use, state.")

        @OptionGroup var target: Target
        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            let response = try await client.get(target.path, target.credentials)
            try output.emit(response) { () throws(CLIError) in
                let list = try response.decode(APIKeyList.self, url: client.connection.displayURL)
                var table = TableRenderer(["KEY_ID", "NAME", "SCOPES", "RANGES", "AGE", "LAST_USED", "FROM", "STATE"])
                for key in list.keys {
                    table.append([
                        key.keyID, key.name, key.scopes.isEmpty ? "admin" : key.scopes.joined(separator: ","),
                        key.allowedRanges?.joined(separator: ",") ?? "any", "\(key.ageDays)d", key.lastUsedAt ?? "never",
                        key.lastUsedFrom ?? "-", key.state,
                    ])
                }
                return table.render()
            }
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a key's successor (same name, scopes and ranges); the old key works until revoked."
        )

        @Argument(help: "The key id (hk_…, hka_… with --admin).") var keyID: String
        @Option(help: ArgumentHelp("The new key's expiry (ISO 8601).", valueName: "time")) var expires: String?
        @OptionGroup var target: Target

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            struct Body: Encodable {
                var expiresAt: String?
                enum CodingKeys: String, CodingKey { case expiresAt = "expires_at" }
            }
            let client = try connection.client()
            let response = try await client.send(
                "POST",
                "\(target.path)/\(APIClient.segment(keyID))/rotate",
                json: Body(expiresAt: expires),
                target.credentials
            )
            try output.emit(response) { () throws(CLIError) in
                let created = try response.decode(APIKeyModel.self, url: client.connection.displayURL).created
                return created + "\nthen move clients to it and: heraldctl keys revoke \(keyID)\(target.admin ? " --admin" : "")"
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a key: it stops working at once.")

        @Argument(help: "The key id (hk_…, hka_… with --admin).") var keyID: String
        @OptionGroup var target: Target

        @OptionGroup(title: "Connection") var connection: ConnectionOptions

        func run() async throws {
            let client = try connection.client()
            _ = try await client.delete("\(target.path)/\(APIClient.segment(keyID))", target.credentials)
            Terminal.print("revoked \(keyID)")
        }
    }
}

/// A key as the API answers it (with its secret once, after create and rotate).
struct APIKeyModel: Decodable {
    var keyID: String
    var name: String
    var scopes: [String]
    var allowedRanges: [String]?
    var expiresAt: String?
    var ageDays: Int
    var rotatedFrom: String?
    var revokedAt: String?
    var lastUsedAt: String?
    var lastUsedFrom: String?
    var active: Bool
    var secret: String?

    enum CodingKeys: String, CodingKey {
        case name, scopes, active, secret
        case keyID = "key_id"
        case allowedRanges = "allowed_ranges"
        case expiresAt = "expires_at"
        case ageDays = "age_days"
        case rotatedFrom = "rotated_from"
        case revokedAt = "revoked_at"
        case lastUsedAt = "last_used_at"
        case lastUsedFrom = "last_used_from"
    }

    var state: String { revokedAt != nil ? "revoked" : active ? "active" : "expired" }

    /// What create and rotate print.
    var created: String {
        """
        key_id   \(keyID)
        name     \(name)
        scopes   \(scopes.isEmpty ? "admin" : scopes.joined(separator: ","))
        ranges   \(allowedRanges?.joined(separator: ",") ?? "any")
        expires  \(expiresAt ?? "never")
        secret   \(secret ?? "-") (shown only once)
        """
    }
}

struct APIKeyList: Decodable {
    var keys: [APIKeyModel]
}
