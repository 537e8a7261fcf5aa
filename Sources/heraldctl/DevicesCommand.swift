import ArgumentParser

/// `heraldctl devices`: one device by registration id, as an operator.
struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "Show, update or delete a device, or whether devices are online (app key and master secret); import devices (admin token).",
        subcommands: [Show.self, Update.self, Delete.self, Status.self, DevicesImportCommand.self]
    )

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a device: platform, alias, tags, tokens.")

        @Argument(help: ArgumentHelp("The registration id.", valueName: "rid")) var registrationID: String

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            let response = try await client.get("/v3/devices/\(APIClient.segment(registrationID))", .app)
            try output.emit(response) { () throws(CLIError) in
                TableRenderer.fields(try response.decode(Device.self, url: client.connection.displayURL).fields)
            }
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add or remove tags, set or clear the alias or the mobile number.",
            discussion: """
                Example: heraldctl devices update RID --add-tag vip --add-tag beta --remove-tag trial --alias alice
                         heraldctl devices update RID --mobile +8613800138000
                """
        )

        @Argument(help: ArgumentHelp("The registration id.", valueName: "rid")) var registrationID: String
        @Option(name: .customLong("add-tag"), help: ArgumentHelp("Add this tag (repeatable).", valueName: "tag")) var addTags: [String] = []
        @Option(name: .customLong("remove-tag"), help: ArgumentHelp("Remove this tag (repeatable).", valueName: "tag"))
        var removeTags: [String] = []
        @Flag(help: "Remove every tag of the device.") var clearTags = false
        @Option(help: "Set the device's alias.") var alias: String?
        @Flag(help: "Clear the device's alias.") var clearAlias = false
        @Option(help: ArgumentHelp("Bind a mobile number, for the SMS fallback (E.164, or a mainland number).", valueName: "number"))
        var mobile: String?
        @Flag(help: "Clear the device's mobile number.") var clearMobile = false

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func validate() throws {
            if addTags.isEmpty, removeTags.isEmpty, !clearTags, alias == nil, !clearAlias, mobile == nil, !clearMobile {
                throw ValidationError(
                    "Nothing to change: give --add-tag, --remove-tag, --clear-tags, --alias, --clear-alias, --mobile or --clear-mobile."
                )
            }
            if clearMobile, mobile != nil { throw ValidationError("--mobile and --clear-mobile are exclusive.") }
            if mobile == "" { throw ValidationError("--mobile must not be empty; use --clear-mobile to clear it.") }
            if clearTags, !addTags.isEmpty || !removeTags.isEmpty {
                throw ValidationError("--clear-tags is exclusive with --add-tag and --remove-tag.")
            }
            if clearAlias, alias != nil { throw ValidationError("--alias and --clear-alias are exclusive.") }
            if alias == "" { throw ValidationError("--alias must not be empty; use --clear-alias to clear it.") }
        }

        func run() async throws {
            let client = try connection.client()
            let change = DeviceUpdate(
                tags: clearTags ? .clear : (addTags.isEmpty && removeTags.isEmpty ? nil : .change(add: addTags, remove: removeTags)),
                alias: clearAlias ? "" : alias,
                mobile: clearMobile ? "" : mobile
            )
            let response = try await client.send("POST", "/v3/devices/\(APIClient.segment(registrationID))", json: change, .app)
            try output.emit(response) { () throws(CLIError) in
                TableRenderer.fields(try response.decode(Device.self, url: client.connection.displayURL).fields)
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a device.")

        @Argument(help: ArgumentHelp("The registration id.", valueName: "rid")) var registrationID: String

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            let response = try await client.delete("/v3/devices/\(APIClient.segment(registrationID))", .app)
            try output.emit(response) { "deleted device \(registrationID)" }
        }
    }
}

extension DevicesCommand {
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show whether devices are connected, and when they last were.",
            discussion: """
                ONLINE is yes while the device holds a connection; LAST_ONLINE (UTC) is when its last \
                connection closed, - while it is online or if it never connected. A registration id that \
                is no device of this app shows "not in this app".
                Example: heraldctl devices status 0123456789abcdef0123 abcdef0123456789abcd
                """
        )

        @Argument(help: ArgumentHelp("The registration ids (at most 1000).", valueName: "rid")) var registrationIDs: [String]

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func validate() throws {
            if registrationIDs.isEmpty { throw ValidationError("Name at least one registration id.") }
        }

        func run() async throws {
            let client = try connection.client()
            let response = try await client.send("POST", "/v3/devices/status", json: ["registration_ids": registrationIDs], .app)
            try output.emit(response) { () throws(CLIError) in
                let statuses = try response.decode([String: DevicePresence?].self, url: client.connection.displayURL)
                var table = TableRenderer(["REGISTRATION_ID", "ONLINE", "LAST_ONLINE"])
                for id in registrationIDs {
                    guard case .some(.some(let presence)) = statuses[id] else {
                        table.append([id, "not in this app", "-"])
                        continue
                    }
                    table.append([id, presence.online ? "yes" : "no", presence.lastOnlineTime ?? "-"])
                }
                return table.render()
            }
        }
    }
}

/// One device's presence in `POST /v3/devices/status` (null: no device of this app).
struct DevicePresence: Decodable {
    var online: Bool
    var lastOnlineTime: String?

    enum CodingKeys: String, CodingKey {
        case online
        case lastOnlineTime = "last_online_time"
    }
}

/// The body of `POST /v3/devices/{registration_id}`: absent keys are left alone.
struct DeviceUpdate: Encodable {
    enum Tags {
        case clear
        case change(add: [String], remove: [String])
    }

    var tags: Tags?
    /// `""` clears the alias.
    var alias: String?
    /// `""` clears the mobile number.
    var mobile: String? = nil

    enum CodingKeys: String, CodingKey { case tags, alias, mobile, add, remove }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch tags {
        case .clear:
            try container.encode("", forKey: .tags)
        case .change(let add, let remove):
            var nested = container.nestedContainer(keyedBy: CodingKeys.self, forKey: .tags)
            if !add.isEmpty { try nested.encode(add, forKey: .add) }
            if !remove.isEmpty { try nested.encode(remove, forKey: .remove) }
        case nil:
            break
        }
        try container.encodeIfPresent(alias, forKey: .alias)
        try container.encodeIfPresent(mobile, forKey: .mobile)
    }
}
