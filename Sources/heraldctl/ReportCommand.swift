import ArgumentParser

/// `heraldctl report`: JPush's report views of messages, as JPush clients read them.
struct ReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Show JPush's report views of messages: per channel, or JPush's received counts.",
        discussion: """
            By default one row per message, view and channel (GET /v3/messages/detail): VIEW is \
            notification or message (in-app); CHANNEL is all, jg_android and jg_ios (the long \
            connection) or apns. TARGET copies, SENT acknowledged or accepted by APNs, RECEIVED \
            acknowledged by the device, CLICK opened or clicked.
            --received shows JPush's received counts instead (GET /v3/received/detail).
            `heraldctl status` shows Herald's own report, with failures and waiting copies.
            Examples:
              heraldctl report 0123456789abcdef01234567
              heraldctl report 0123456789abcdef01234567 --received
            """
    )

    @Argument(help: ArgumentHelp("The message ids (at most 100).", valueName: "msg-id")) var messageIDs: [String]
    @Flag(help: "Show JPush's received counts (jpush_received, ios_apns_sent, ...) instead of the channels.")
    var received = false

    @OptionGroup(title: "Connection") var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if messageIDs.isEmpty { throw ValidationError("Name at least one message id.") }
    }

    /// The views as a table; message ids the server doesn't know are named on stderr and
    /// make the exit status 1.
    func run() async throws {
        let client = try connection.client()
        let query = ["msg_ids": messageIDs.joined(separator: ",")]
        let url = client.connection.displayURL
        let found: [String]
        if received {
            let response = try await client.get("/v3/received/detail", query: query, .app)
            let rows = try response.decode([JPushReceived].self, url: url)
            found = rows.map(\.messageID)
            try output.emit(response) {
                var table = TableRenderer(["MSG_ID", "JPUSH_RECEIVED", "IOS_APNS_SENT", "IOS_APNS_RECEIVED", "IOS_MSG_RECEIVED"])
                for row in rows {
                    table.append([row.messageID] + [row.jpushReceived, row.apnsSent, row.apnsReceived, row.messagesReceived].map(Self.number))
                }
                return rows.isEmpty ? "" : table.render()
            }
        } else {
            let response = try await client.get("/v3/messages/detail", query: query, .app)
            let details = try response.decode([JPushMessageDetail].self, url: url)
            found = details.map(\.messageID)
            try output.emit(response) { Self.channels(details) }
        }
        let missing = messageIDs.filter { !found.contains($0) }
        if !missing.isEmpty {
            throw CLIError.failed(missing.map { "no message \($0) in this app" }.joined(separator: "\nerror: "))
        }
    }

    /// One row per message, view and channel.
    static func channels(_ details: [JPushMessageDetail]) -> String {
        var table = TableRenderer(["MSG_ID", "VIEW", "CHANNEL", "TARGET", "SENT", "RECEIVED", "CLICK"])
        for detail in details {
            for (view, stats) in [("notification", detail.details.notification), ("message", detail.details.message)] {
                guard let stats else { continue }
                let channels = [
                    ("all", stats.counts), ("jg_android", stats.subAndroid?.jgAndroid), ("jg_ios", stats.subIOS?.jgIOS),
                    ("apns", stats.subIOS?.apns),
                ]
                for case (let channel, let counts?) in channels {
                    table.append([detail.messageID, view, channel] + [counts.target, counts.sent, counts.received, counts.click].map(number))
                }
            }
        }
        return details.isEmpty ? "" : table.render()
    }

    static func number(_ value: Int?) -> String { value.map(String.init) ?? "-" }
}
