import ArgumentParser
import Foundation

/// `heraldctl events`: the app's delivery events, one line each, from a cursor.
struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Print the app's delivery events; --follow keeps printing them as they happen.",
        discussion: """
            One line per event: TIME TYPE MSG_ID REGISTRATION_ID and what it adds (apns_id, \
            reason, inbox_seq). --json prints each event as a JSON line (NDJSON). Without \
            --follow it prints what there is and, on stderr, the cursor to pass as --after \
            next time. The app must record events (an admin enables them, or it has a webhook; \
            a push with a callback records its own).
            Examples:
              heraldctl events --follow
              heraldctl events --follow --types sent_apns,failed --json
              heraldctl events --after 7431-812
            """
    )

    @Flag(help: "Keep printing events as they come (long polls).") var follow = false
    @Option(help: ArgumentHelp("Start after this cursor (the last one printed, or on stderr).", valueName: "cursor"))
    var after: String?
    @Option(help: ArgumentHelp("Only these event types, comma-separated.", valueName: "types")) var types: String?
    @Option(help: ArgumentHelp("Stop after this many events.", valueName: "count")) var maxEvents: Int?

    @OptionGroup(title: "Connection") var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if let maxEvents, maxEvents < 1 { throw ValidationError("--max-events must be at least 1.") }
    }

    func run() async throws {
        let client = try connection.client()
        var cursor = after
        var printed = 0
        // A long poll shorter than the request timeout, so an idle stream is not an error.
        let wait = follow ? max(1, min(25, Int(connection.requestTimeout) - 5)) : 0
        while true {
            var query = ["limit": "500", "wait": String(wait)]
            if let cursor { query["after"] = cursor }
            if let types { query["types"] = types }
            let response = try await client.get("/v3/events", query: query, .app)
            guard let page = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
                let events = page["events"] as? [[String: Any]], let next = page["cursor"] as? String
            else {
                throw CLIError.unexpectedResponse(status: response.status, url: client.connection.displayURL)
            }
            for event in events {
                if output.json {
                    let line = try JSONSerialization.data(withJSONObject: event, options: [.sortedKeys, .withoutEscapingSlashes])
                    Terminal.printRaw(line)
                } else {
                    Terminal.print(Self.line(event))
                }
                printed += 1
                if let maxEvents, printed >= maxEvents {
                    Terminal.warn("cursor \(event["cursor"] as? String ?? next)")
                    return
                }
            }
            cursor = next
            if !follow {
                Terminal.warn("cursor \(next)")
                return
            }
        }
    }

    /// An event as a line of text.
    static func line(_ event: [String: Any]) -> String {
        var fields = [
            event["at"] as? String ?? "-", event["type"] as? String ?? "-", event["msg_id"] as? String ?? "-",
            event["registration_id"] as? String ?? "-",
        ]
        if let data = event["data"] as? [String: Any], !data.isEmpty {
            fields.append(data.keys.sorted().map { "\($0)=\(data[$0].map { "\($0)" } ?? "")" }.joined(separator: " "))
        }
        return fields.joined(separator: "  ")
    }
}
