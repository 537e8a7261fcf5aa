import ArgumentParser
import Foundation

/// `heraldctl apps apns`: an app's APNs credentials. The app key argument defaults to the
/// connection's app key.
struct APNsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apns",
        abstract: "Set, show or delete an app's APNs credentials.",
        subcommands: [Set.self, Show.self, Delete.self]
    )

    enum Environment: String, ExpressibleByArgument, CaseIterable {
        case production, sandbox
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Upload a .p8 signing key (token auth) or a client certificate.",
            discussion: """
                Token auth:       heraldctl apps apns set --p8 AuthKey_ABC123DEFG.p8 --key-id ABC123DEFG \
                --team-id DEF123GHIJ --bundle-id com.example.app --environment production
                Certificate auth: heraldctl apps apns set --certificate cert.pem --private-key key.pem \
                --bundle-id com.example.app --environment sandbox
                The key is checked by the server and stored encrypted; it is never shown again.
                """
        )

        @Argument(help: "The app key (default: the connection's app key).") var appKey: String?
        @Option(help: ArgumentHelp("The .p8 signing key file, for token auth.", valueName: "file")) var p8: String?
        @Option(help: "The key's id (10 characters), for token auth.") var keyID: String?
        @Option(help: "The Apple developer team id (10 characters), for token auth.") var teamID: String?
        @Option(help: ArgumentHelp("The PEM client certificate file, for certificate auth.", valueName: "file")) var certificate: String?
        @Option(help: ArgumentHelp("The PEM private key file of the certificate.", valueName: "file")) var privateKey: String?
        @Option(help: "The app's bundle id (the APNs topic).") var bundleID: String
        @Option(help: "production or sandbox.") var environment: Environment

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func validate() throws {
            switch (p8, certificate) {
            case (nil, nil): throw ValidationError("Give --p8 FILE (token auth) or --certificate FILE (certificate auth).")
            case (.some, .some): throw ValidationError("--p8 and --certificate are exclusive.")
            case (.some, nil):
                guard keyID != nil, teamID != nil else { throw ValidationError("--p8 needs --key-id and --team-id.") }
                if privateKey != nil { throw ValidationError("--private-key goes with --certificate; the .p8 file is the key.") }
            case (nil, .some):
                guard privateKey != nil else { throw ValidationError("--certificate needs --private-key FILE.") }
                if keyID != nil || teamID != nil { throw ValidationError("--key-id and --team-id go with --p8, not --certificate.") }
            }
        }

        func run() async throws {
            let client = try connection.client()
            var body: [String: String] = ["bundle_id": bundleID, "environment": environment.rawValue]
            if let p8 {
                body["type"] = "token"
                body["key_id"] = keyID
                body["team_id"] = teamID
                body["private_key"] = try Self.read(p8, flag: "--p8")
            } else if let certificate, let privateKey {
                body["type"] = "certificate"
                body["certificate"] = try Self.read(certificate, flag: "--certificate")
                body["private_key"] = try Self.read(privateKey, flag: "--private-key")
            }
            let app = try APNsCommand.appKey(appKey, client)
            let response = try await client.send("PUT", "/admin/v1/apps/\(APIClient.segment(app))/apns", json: body, .admin)
            try output.emit(response) { () throws(CLIError) in
                TableRenderer.fields(try response.decode(APNsStatus.self, url: client.connection.displayURL).fields)
            }
        }

        static func read(_ path: String, flag: String) throws(CLIError) -> String {
            guard let data = FileManager.default.contents(atPath: path) else { throw .usage("\(flag): cannot read \(path)") }
            return String(decoding: data, as: UTF8.self)
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show what APNs credentials an app has (never the key).")

        @Argument(help: "The app key (default: the connection's app key).") var appKey: String?

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            let app = try APNsCommand.appKey(appKey, client)
            let response = try await client.get("/admin/v1/apps/\(APIClient.segment(app))/apns", .admin)
            try output.emit(response) { () throws(CLIError) in
                TableRenderer.fields(try response.decode(APNsStatus.self, url: client.connection.displayURL).fields)
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete an app's APNs credentials.")

        @Argument(help: "The app key (default: the connection's app key).") var appKey: String?

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            let app = try APNsCommand.appKey(appKey, client)
            let response = try await client.delete("/admin/v1/apps/\(APIClient.segment(app))/apns", .admin)
            try output.emit(response) { "deleted the APNs credentials of app \(app)" }
        }
    }

    static func appKey(_ argument: String?, _ client: APIClient) throws(CLIError) -> String {
        guard let key = argument ?? client.connection.appKey?.value else {
            throw .usage("name the app: heraldctl apps apns ... APP_KEY, or set HERALD_APP_KEY or --app-key")
        }
        return key
    }
}
