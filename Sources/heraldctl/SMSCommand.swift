import ArgumentParser
import Foundation

/// `heraldctl apps sms`: an app's own SMS provider over HTTP (the SMS fallback of its
/// pushes). The app key argument defaults to the connection's app key.
struct SMSCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sms",
        abstract: "Set, show or delete an app's SMS provider.",
        subcommands: [Set.self, Show.self, Delete.self]
    )

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send the app's SMS to an HTTP provider: one signed POST per SMS.",
            discussion: """
                Example: heraldctl apps sms set --provider-url https://sms.example.com/send \
                --template '{"to": {{mobile}}, "text": {{content}}}' --secret-file sms.secret
                Placeholders (bare, filled with JSON values): {{mobile}} {{content}} {{template_id}} {{params}} \
                {{sign_id}} {{msg_id}} {{idempotency_key}}. The secret signs each request (HMAC-SHA256); it is \
                stored encrypted and never shown again.
                """
        )

        @Argument(help: "The app key (default: the connection's app key).") var appKey: String?
        @Option(name: .customLong("provider-url"), help: "The provider's http(s) URL.") var url: String
        @Option(help: ArgumentHelp("The JSON body, with placeholders.", valueName: "json")) var template: String
        @Option(help: ArgumentHelp("A file holding the HMAC secret (at least 16 bytes).", valueName: "file")) var secretFile: String
        @Option(help: "The signature's header (default X-Herald-Signature).") var signatureHeader: String?
        @Option(help: ArgumentHelp("Seconds to wait for the provider (1 to 60, default 10).", valueName: "seconds")) var timeout: Int?

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            guard let data = FileManager.default.contents(atPath: secretFile) else {
                throw CLIError.usage("--secret-file: cannot read \(secretFile)")
            }
            let secret = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            let body = SMSProviderBody(url: url, bodyTemplate: template, secret: secret, signatureHeader: signatureHeader, timeoutSeconds: timeout)
            let app = try APNsCommand.appKey(appKey, client)
            let response = try await client.send("PUT", "/admin/v1/apps/\(APIClient.segment(app))/sms", json: body, .admin)
            try output.emit(response) { () throws(CLIError) in
                TableRenderer.fields(try response.decode(SMSProvider.self, url: client.connection.displayURL).fields)
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show an app's SMS provider (never the secret).")

        @Argument(help: "The app key (default: the connection's app key).") var appKey: String?

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            let app = try APNsCommand.appKey(appKey, client)
            let response = try await client.get("/admin/v1/apps/\(APIClient.segment(app))/sms", .admin)
            try output.emit(response) { () throws(CLIError) in
                TableRenderer.fields(try response.decode(SMSProvider.self, url: client.connection.displayURL).fields)
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete an app's SMS provider (its SMS go through the server's default).")

        @Argument(help: "The app key (default: the connection's app key).") var appKey: String?

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            let app = try APNsCommand.appKey(appKey, client)
            let response = try await client.delete("/admin/v1/apps/\(APIClient.segment(app))/sms", .admin)
            try output.emit(response) { "deleted the SMS provider of app \(app)" }
        }
    }
}

/// The body of `PUT /admin/v1/apps/{app_key}/sms`.
struct SMSProviderBody: Encodable {
    var url: String
    var bodyTemplate: String
    var secret: String
    var signatureHeader: String?
    var timeoutSeconds: Int?

    enum CodingKeys: String, CodingKey {
        case url, secret
        case bodyTemplate = "body_template"
        case signatureHeader = "signature_header"
        case timeoutSeconds = "timeout_seconds"
    }
}

/// `GET /admin/v1/apps/{app_key}/sms`.
struct SMSProvider: Decodable {
    var type: String
    var url: String
    var bodyTemplate: String
    var signatureHeader: String
    var timeoutSeconds: Int
    var updatedAt: String

    enum CodingKeys: String, CodingKey {
        case type, url
        case bodyTemplate = "body_template"
        case signatureHeader = "signature_header"
        case timeoutSeconds = "timeout_seconds"
        case updatedAt = "updated_at"
    }

    var fields: [(String, String)] {
        [
            ("type", type), ("url", url), ("body_template", bodyTemplate), ("signature_header", signatureHeader),
            ("timeout_seconds", "\(timeoutSeconds)"), ("updated_at", updatedAt),
        ]
    }
}
