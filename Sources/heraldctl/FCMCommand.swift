import ArgumentParser
import Foundation

/// `heraldctl apps fcm`: an app's Firebase service account. The app key argument defaults
/// to the connection's app key.
struct FCMCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fcm",
        abstract: "Set, show or delete an app's FCM service account.",
        subcommands: [Set.self, Show.self, Delete.self]
    )

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Upload a Firebase service account's JSON key file.",
            discussion: """
                heraldctl apps fcm set --service-account shop-firebase-adminsdk.json --project shop-7f3a2
                The file is the one Firebase's console downloads (Project settings, Service accounts, \
                Generate new private key). The server checks it, tries it at its token endpoint, and \
                stores it encrypted; the key is never shown again.
                """
        )

        @Argument(help: "The app key (default: the connection's app key).") var appKey: String?
        @Option(help: ArgumentHelp("The service account's JSON key file.", valueName: "file")) var serviceAccount: String
        @Option(help: "The app's Firebase project id: a key file for another project is refused.") var project: String?

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            guard let file = FileManager.default.contents(atPath: serviceAccount) else {
                throw CLIError.usage("--service-account: cannot read \(serviceAccount)")
            }
            guard let object = try? JSONSerialization.jsonObject(with: file) else {
                throw CLIError.usage("--service-account: \(serviceAccount) is not JSON (the key file Firebase's console downloads)")
            }
            var body: [String: Any] = ["service_account": object]
            if let project { body["project_id"] = project }
            let app = try APNsCommand.appKey(appKey, client)
            let response = try await client.send(
                "PUT",
                "/admin/v1/apps/\(APIClient.segment(app))/fcm",
                body: try JSONSerialization.data(withJSONObject: body),
                .admin
            )
            try output.emit(response) { () throws(CLIError) in
                TableRenderer.fields(try response.decode(FCMStatus.self, url: client.connection.displayURL).fields)
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show which FCM service account an app has (never the key).")

        @Argument(help: "The app key (default: the connection's app key).") var appKey: String?

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            let app = try APNsCommand.appKey(appKey, client)
            let response = try await client.get("/admin/v1/apps/\(APIClient.segment(app))/fcm", .admin)
            try output.emit(response) { () throws(CLIError) in
                TableRenderer.fields(try response.decode(FCMStatus.self, url: client.connection.displayURL).fields)
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete an app's FCM service account.")

        @Argument(help: "The app key (default: the connection's app key).") var appKey: String?

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            let app = try APNsCommand.appKey(appKey, client)
            let response = try await client.delete("/admin/v1/apps/\(APIClient.segment(app))/fcm", .admin)
            try output.emit(response) { "deleted the FCM service account of app \(app)" }
        }
    }
}

/// `GET /admin/v1/apps/{app_key}/fcm`.
struct FCMStatus: Decodable {
    var projectID: String
    var clientEmail: String
    var privateKeyID: String
    var updatedAt: String
    var status: String
    var problem: String?

    enum CodingKeys: String, CodingKey {
        case status, problem
        case projectID = "project_id"
        case clientEmail = "client_email"
        case privateKeyID = "private_key_id"
        case updatedAt = "updated_at"
    }

    var fields: [(String, String)] {
        [
            ("project_id", projectID), ("client_email", clientEmail), ("private_key_id", privateKeyID), ("updated_at", updatedAt),
            ("status", problem.map { "\(status) (\($0))" } ?? status),
        ]
    }
}
