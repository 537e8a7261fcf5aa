import ArgumentParser

/// `heraldctl aliases`: which devices carry an alias, and clearing it.
struct AliasesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "aliases",
        abstract: "Look up or clear an alias (app key and master secret).",
        subcommands: [Show.self, Delete.self]
    )

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the registration ids of the devices with an alias.")

        @Argument(help: "The alias.") var alias: String

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            let response = try await client.get("/v3/aliases/\(APIClient.segment(alias))", .app)
            try output.emit(response) { () throws(CLIError) in
                let list = try response.decode(RegistrationIDList.self, url: client.connection.displayURL)
                if list.registrationIDs.isEmpty { return "no device has the alias \(TableRenderer.safe(alias))" }
                return TableRenderer(["REGISTRATION_ID"], rows: list.registrationIDs.map { [$0] }).render()
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Clear an alias from every device.")

        @Argument(help: "The alias.") var alias: String

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            let response = try await client.delete("/v3/aliases/\(APIClient.segment(alias))", .app)
            try output.emit(response) { "cleared the alias \(TableRenderer.safe(alias)) from every device" }
        }
    }
}
