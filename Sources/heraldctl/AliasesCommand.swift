import ArgumentParser

/// `heraldctl aliases`: which devices carry an alias, taking it from some, and clearing it.
struct AliasesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "aliases",
        abstract: "Look up, take from devices or clear an alias (app key and master secret).",
        subcommands: [Show.self, Remove.self, Delete.self]
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

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Take an alias from these devices (the others keep it).",
            discussion: "Example: heraldctl aliases remove alice 0123456789abcdef0123"
        )

        @Argument(help: "The alias.") var alias: String
        @Argument(help: ArgumentHelp("The registration ids (at most 1000).", valueName: "rid")) var registrationIDs: [String]

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func validate() throws {
            if registrationIDs.isEmpty { throw ValidationError("Name at least one registration id.") }
        }

        func run() async throws {
            struct Body: Encodable {
                struct Change: Encodable { var remove: [String] }
                var registrationIDs: Change
                enum CodingKeys: String, CodingKey { case registrationIDs = "registration_ids" }
            }
            struct Removed: Decodable { var removed: Int }
            let client = try connection.client()
            let path = "/v3/aliases/\(APIClient.segment(alias))"
            let response = try await client.send("POST", path, json: Body(registrationIDs: .init(remove: registrationIDs)), .app)
            try output.emit(response) { () throws(CLIError) in
                let removed = try response.decode(Removed.self, url: client.connection.displayURL).removed
                return "took the alias \(TableRenderer.safe(alias)) from \(removed) device\(removed == 1 ? "" : "s")"
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
