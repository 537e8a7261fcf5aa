import ArgumentParser

/// `heraldctl tags`: an app's tags and their devices, in bulk.
struct TagsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tags",
        abstract: "List tags, tag devices in bulk, check or delete a tag (app key and master secret).",
        subcommands: [List.self, Add.self, Remove.self, Delete.self, Check.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List every tag at least one device has.")

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            let response = try await client.get("/v3/tags", .app)
            try output.emit(response) { () throws(CLIError) in
                let list = try response.decode(TagList.self, url: client.connection.displayURL)
                return TableRenderer(["TAG"], rows: list.tags.map { [$0] }).render()
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a tag to devices (at most 1000 per call).")

        @Argument(help: "The tag.") var tag: String
        @Argument(help: ArgumentHelp("The registration ids.", valueName: "rid")) var registrationIDs: [String]

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func validate() throws {
            if registrationIDs.isEmpty { throw ValidationError("Name at least one registration id.") }
        }

        func run() async throws {
            try await TagsCommand.change(tag, add: registrationIDs, remove: [], connection, output)
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a tag from devices (at most 1000 per call).")

        @Argument(help: "The tag.") var tag: String
        @Argument(help: ArgumentHelp("The registration ids.", valueName: "rid")) var registrationIDs: [String]

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func validate() throws {
            if registrationIDs.isEmpty { throw ValidationError("Name at least one registration id.") }
        }

        func run() async throws {
            try await TagsCommand.change(tag, add: [], remove: registrationIDs, connection, output)
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a tag from every device.")

        @Argument(help: "The tag.") var tag: String

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            let response = try await client.delete("/v3/tags/\(APIClient.segment(tag))", .app)
            try output.emit(response) { "deleted the tag \(TableRenderer.safe(tag)) from every device" }
        }
    }

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Whether a device has a tag.",
            discussion: "Prints yes or no; the exit status is 0 either way (use --json and jq for scripts)."
        )

        @Argument(help: "The tag.") var tag: String
        @Argument(help: ArgumentHelp("The registration id.", valueName: "rid")) var registrationID: String

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            let path = "/v3/tags/\(APIClient.segment(tag))/registration_ids/\(APIClient.segment(registrationID))"
            let response = try await client.get(path, .app)
            try output.emit(response) { () throws(CLIError) in
                try response.decode(TagMembership.self, url: client.connection.displayURL).result ? "yes" : "no"
            }
        }
    }

    static func change(_ tag: String, add: [String], remove: [String], _ connection: ConnectionOptions, _ output: OutputOptions) async throws {
        struct Body: Encodable {
            struct Changes: Encodable {
                var add: [String]
                var remove: [String]
            }
            var registrationIDs: Changes
            enum CodingKeys: String, CodingKey { case registrationIDs = "registration_ids" }
        }
        let client = try connection.client()
        let body = Body(registrationIDs: .init(add: add, remove: remove))
        let response = try await client.send("POST", "/v3/tags/\(APIClient.segment(tag))", json: body, .app)
        try output.emit(response) { () throws(CLIError) in
            let result = try response.decode(TagMembersResult.self, url: client.connection.displayURL)
            return TableRenderer.fields([("added", "\(result.added)"), ("removed", "\(result.removed)")])
        }
    }
}
