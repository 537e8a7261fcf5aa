import ArgumentParser
import Foundation

/// `heraldctl categories`: notification categories defined on the server (their actions
/// and routes), sent with the pushes that name them (`heraldctl push --category ID`).
struct CategoriesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "categories",
        abstract: "Create, update, list, show, delete, deliver notification categories; count devices per version (app key and master secret).",
        discussion: """
            A push naming a category (heraldctl push --category ID) carries its actions and routes \
            as they are when the push is accepted. `deliver` sends a category ahead to devices \
            without a notification service extension; `devices` counts the versions devices hold.
            """,
        subcommands: [Create.self, Update.self, List.self, Show.self, Delete.self, Deliver.self, Devices.self]
    )

    /// A category from a file (`--body`), or from flags.
    struct Definition: ParsableArguments {
        @Option(help: ArgumentHelp("The category object: a file, or - for stdin.", valueName: "file")) var body: String?
        @Option(help: ArgumentHelp("An action, id:title or id:title:router-url (repeatable, at most 4).", valueName: "action"))
        var action: [String] = []
        @Option(help: ArgumentHelp("The route a tap on the notification opens.", valueName: "url")) var router: String?
        @Option(help: ArgumentHelp("A category option, such as customDismissAction (repeatable).", valueName: "option"))
        var option: [String] = []

        func validate() throws {
            if body != nil, !action.isEmpty || router != nil || !option.isEmpty {
                throw ValidationError("--body is the whole category; put --action, --router and --option in it instead.")
            }
        }

        /// The JSON object to send, with `identifier` when one is given.
        func data(identifier: String?) throws -> Data {
            if let body {
                if body == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
                guard let contents = FileManager.default.contents(atPath: body) else { throw CLIError.usage("cannot read \(body)") }
                return contents
            }
            var category = CategoryBody(identifier: identifier)
            category.options = option.isEmpty ? nil : option
            category.defaultRouter = router.map { CategoryBody.Router(routerURL: $0) }
            category.actions = try action.map(Self.action)
            return try JSONEncoder().encode(category)
        }

        /// `id:title` or `id:title:router-url` (the URL may hold colons).
        static func action(_ text: String) throws -> CategoryBody.Action {
            let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            guard parts.count >= 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw ValidationError("--action \(text): expected id:title or id:title:router-url")
            }
            return CategoryBody.Action(identifier: parts[0], title: parts[1], router: parts.count == 3 ? .init(routerURL: parts[2]) : nil)
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Define a category, from a JSON file or from flags.",
            discussion: """
                Examples: heraldctl categories create --body category.json
                          heraldctl categories create push_extension_order --action view:View:shop://orders --router shop://orders
                """
        )

        @Argument(help: "The category's identifier (with flags; a --body file names its own).") var identifier: String?
        @OptionGroup var definition: Definition
        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func validate() throws {
            if definition.body == nil, identifier == nil { throw ValidationError("Give the category's identifier, or --body.") }
        }

        func run() async throws {
            let client = try connection.client()
            let response = try await client.send("POST", "/v3/categories", body: try definition.data(identifier: identifier), .app)
            try output.emit(response) { () throws(CLIError) in
                try CategoriesCommand.describe(response.decode(CategoryModel.self, url: client.connection.displayURL))
            }
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Replace a category's definition; its version grows by one.")

        @Argument(help: "The category's identifier.") var identifier: String
        @OptionGroup var definition: Definition
        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            let path = "/v3/categories/\(APIClient.segment(identifier))"
            let response = try await client.send("PUT", path, body: try definition.data(identifier: nil), .app)
            try output.emit(response) { () throws(CLIError) in
                try CategoriesCommand.describe(response.decode(CategoryModel.self, url: client.connection.displayURL))
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the app's categories.")

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            let response = try await client.get("/v3/categories", .app)
            try output.emit(response) { () throws(CLIError) in
                let list = try response.decode(CategoryList.self, url: client.connection.displayURL)
                if list.categories.isEmpty { return "no categories" }
                var table = TableRenderer(["IDENTIFIER", "VERSION", "ACTIONS", "UPDATED"])
                for category in list.categories {
                    table.append([
                        TableRenderer.safe(category.identifier), "\(category.version)",
                        TableRenderer.safe((category.actions ?? []).map(\.identifier).joined(separator: ",")), category.updatedAt ?? "-",
                    ])
                }
                return table.render()
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a category and its version.")

        @Argument(help: "The category's identifier.") var identifier: String
        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            let response = try await client.get("/v3/categories/\(APIClient.segment(identifier))", .app)
            try output.emit(response) { () throws(CLIError) in
                try CategoriesCommand.describe(response.decode(CategoryModel.self, url: client.connection.displayURL))
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a category (pushes accepted before keep it).")

        @Argument(help: "The category's identifier.") var identifier: String
        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            let response = try await client.delete("/v3/categories/\(APIClient.segment(identifier))", .app)
            try output.emit(response) { "deleted category \(identifier)" }
        }
    }

    struct Deliver: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send a category ahead, as a silent message, to devices without a notification service extension."
        )

        @Argument(help: "The category's identifier.") var identifier: String
        @Flag(help: "Every device of the app.") var all = false
        @Option(name: .customLong("rid"), help: ArgumentHelp("A registration id (repeatable).", valueName: "rid")) var registrationIDs: [String] = []
        @Option(name: .customLong("alias"), help: ArgumentHelp("Devices with this alias (repeatable).", valueName: "alias")) var aliases: [String] =
            []
        @Option(name: .customLong("tag"), help: ArgumentHelp("Devices with any of these tags (repeatable).", valueName: "tag")) var tags: [String] =
            []
        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func validate() throws {
            let filters = !registrationIDs.isEmpty || !aliases.isEmpty || !tags.isEmpty
            if all == filters { throw ValidationError("Give --all, or --rid, --alias or --tag.") }
        }

        func run() async throws {
            let audience: AudienceBody =
                all ? .all : .filter(registrationID: registrationIDs.nilIfEmpty, alias: aliases.nilIfEmpty, tag: tags.nilIfEmpty)
            let client = try connection.client()
            let response = try await client.send(
                "POST",
                "/v3/categories/\(APIClient.segment(identifier))/deliver",
                json: DeliverBody(audience: audience),
                .app
            )
            try output.emit(response) { () throws(CLIError) in
                let sent = try response.decode(Delivered.self, url: client.connection.displayURL)
                return TableRenderer.fields([
                    ("msg_id", sent.msgID), ("identifier", TableRenderer.safe(sent.identifier)), ("version", "\(sent.version)"),
                ])
            }
        }
    }

    struct Devices: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Count the devices holding each version of a category.")

        @Argument(help: "The category's identifier.") var identifier: String
        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            let response = try await client.get("/v3/categories/\(APIClient.segment(identifier))/devices", .app)
            try output.emit(response) { () throws(CLIError) in
                let counts = try response.decode(CategoryDevices.self, url: client.connection.displayURL)
                var table = TableRenderer(["VERSION", "DEVICES"])
                for entry in counts.devices {
                    table.append(["\(entry.version)\(entry.version == counts.version ? " (current)" : "")", "\(entry.count)"])
                }
                return "current version \(counts.version), \(counts.total) devices reported\n" + (counts.devices.isEmpty ? "" : table.render())
            }
        }
    }

    static func describe(_ category: CategoryModel) -> String {
        var fields = [("identifier", TableRenderer.safe(category.identifier)), ("version", "\(category.version)")]
        if let router = category.defaultRouter?.routerURL ?? category.defaultRouter?.externalURL {
            fields.append(("router", TableRenderer.safe(router)))
        }
        for action in category.actions ?? [] {
            let route = action.router?.routerURL ?? action.router?.externalURL
            fields.append(("action", TableRenderer.safe("\(action.identifier): \(action.title)" + (route.map { " → \($0)" } ?? ""))))
        }
        return TableRenderer.fields(fields)
    }
}

extension Array {
    fileprivate var nilIfEmpty: Self? { isEmpty ? nil : self }
}
