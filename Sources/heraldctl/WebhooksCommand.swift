import ArgumentParser
import Foundation

/// `heraldctl webhooks`: an app's webhook endpoints, with the admin token.
struct WebhooksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhooks",
        abstract: "Add, list, remove and test an app's webhook endpoints (admin token).",
        discussion: """
            A webhook gets the app's delivery events, in order, in signed batches \
            (docs/webhooks.md). The signing secret is printed once, by `add`.
            Examples:
              heraldctl webhooks add 0123456789abcdef01234567 https://example.com/herald --types sent_apns,failed
              heraldctl webhooks list 0123456789abcdef01234567
            """,
        subcommands: [Add.self, List.self, Remove.self, Test.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add an endpoint; prints its id and signing secret (shown once).")

        @Argument(help: "The app key.") var appKey: String
        @Argument(help: "The endpoint's http or https URL.") var url: String
        @Option(help: ArgumentHelp("Only these event types, comma-separated (default: all).", valueName: "types")) var types: String?

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            struct Body: Encodable {
                var url: String
                var types: [String]?
            }
            let client = try connection.client()
            let types = types.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
            let response = try await client.send(
                "POST",
                "/admin/v1/apps/\(APIClient.segment(appKey))/webhooks",
                json: Body(url: url, types: types),
                .admin
            )
            try output.emit(response) { () throws(CLIError) in
                let created = try response.decode(CreatedWebhook.self, url: client.connection.displayURL)
                return """
                    id      \(created.webhook.id)
                    url     \(created.webhook.url)
                    types   \(created.webhook.types.isEmpty ? "all" : created.webhook.types.joined(separator: ","))
                    secret  \(created.secret) (shown only once)
                    """
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List an app's endpoints: lag, last success, last failure.")

        @Argument(help: "The app key.") var appKey: String

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            let response = try await client.get("/admin/v1/apps/\(APIClient.segment(appKey))/webhooks", .admin)
            try output.emit(response) { () throws(CLIError) in
                let list = try response.decode(WebhookList.self, url: client.connection.displayURL)
                var table = TableRenderer(["ID", "URL", "TYPES", "LAG", "DELIVERED", "LAST_SUCCESS", "FAILURES", "LAST_FAILURE"])
                for webhook in list.webhooks {
                    let failure = webhook.lastFailure.map { "\($0.status.map(String.init) ?? $0.error ?? "-") at \($0.at)" } ?? "-"
                    table.append([
                        String(webhook.id), webhook.url, webhook.types.isEmpty ? "all" : webhook.types.joined(separator: ","), String(webhook.lag),
                        String(webhook.delivered), webhook.lastSuccessAt ?? "-", String(webhook.consecutiveFailures), failure,
                    ])
                }
                return table.render()
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an endpoint.")

        @Argument(help: "The app key.") var appKey: String
        @Argument(help: "The webhook's id.") var id: Int64

        @OptionGroup(title: "Connection") var connection: ConnectionOptions

        func run() async throws {
            let client = try connection.client()
            _ = try await client.delete("/admin/v1/apps/\(APIClient.segment(appKey))/webhooks/\(id)", .admin)
            Terminal.print("removed webhook \(id)")
        }
    }

    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Send the endpoint a signed test request now; exit status 1 unless it answers 2xx.")

        @Argument(help: "The app key.") var appKey: String
        @Argument(help: "The webhook's id.") var id: Int64

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            struct Empty: Encodable {}
            let client = try connection.client()
            let response = try await client.send("POST", "/admin/v1/apps/\(APIClient.segment(appKey))/webhooks/\(id)/test", json: Empty(), .admin)
            let result = try response.decode(WebhookTestResult.self, url: client.connection.displayURL)
            try output.emit(response) { () throws(CLIError) in
                let answer = result.status.map { "answered \($0)" } ?? "no answer (\(result.error ?? "unknown"))"
                return "webhook \(id) \(answer) in \(result.milliseconds) ms"
            }
            if !result.delivered { throw CLIError.failed("webhook \(id) did not answer 2xx") }
        }
    }
}

struct WebhookSummary: Decodable {
    struct Failure: Decodable {
        var status: Int?
        var error: String?
        var at: String
    }

    var id: Int64
    var url: String
    var types: [String]
    var lag: Int
    var delivered: Int64
    var lastSuccessAt: String?
    var lastFailure: Failure?
    var consecutiveFailures: Int

    enum CodingKeys: String, CodingKey {
        case id, url, types, lag, delivered
        case lastSuccessAt = "last_success_at"
        case lastFailure = "last_failure"
        case consecutiveFailures = "consecutive_failures"
    }
}

struct CreatedWebhook: Decodable {
    var webhook: WebhookSummary
    var secret: String
}

struct WebhookList: Decodable {
    var webhooks: [WebhookSummary]
}

struct WebhookTestResult: Decodable {
    var delivered: Bool
    var status: Int?
    var error: String?
    var milliseconds: Int
}
