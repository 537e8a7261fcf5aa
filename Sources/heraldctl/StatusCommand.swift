import ArgumentParser
import Foundation

extension DeliveryWatcher.Until: ExpressibleByArgument {}

/// `heraldctl status`: how far delivery of pushes has got, per message or per device.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show delivery reports; --watch follows one message live, --rid shows devices.",
        discussion: """
            Columns: TARGETED devices, PENDING not routed yet, TCP delivered over the long \
            connection, APNS handed to APNs, FAILED at APNs, WAITING stored for an offline device, \
            OPENED, RECALLED and REPLACED (copies cancelled before they were delivered: a copy \
            already delivered counts where it was delivered, and its device is told to remove it), \
            EXPIRED; DONE once routing is over (copies may still be WAITING).
            --watch follows the message until it settles: routing done and no copy waiting \
            (--until routed stops when routing is done).
            Examples:
              heraldctl status 1a2b3c4d5e 6f7a8b9c0d
              heraldctl status 1a2b3c4d5e --watch
              heraldctl status 1a2b3c4d5e --rid 0123456789abcdef0123
              heraldctl status 1a2b3c4d5e --rid 0123456789abcdef0123 --timeline
            --timeline shows what happened to the copy at each device, step by step with times \
            (accepted, stored, sent_tcp, acknowledged, sent_apns with its apns-id, failed, opened, \
            recalled): from the event log when the app records events, else from the delivery row.
            """
    )

    @Argument(help: ArgumentHelp("The message ids.", valueName: "msg-id")) var messageIDs: [String]
    @Flag(help: "Follow the message until it settles: a progress bar on a terminal, a line per change otherwise.")
    var watch = false
    @Option(help: ArgumentHelp("With --watch: give up after this many seconds (exit status 75).", valueName: "seconds"))
    var waitTimeout: Double?
    @Option(
        help: ArgumentHelp(
            "With --watch: stop when every copy has settled (settled, the default) or when routing is done (routed).",
            valueName: "settled|routed"
        )
    )
    var until: DeliveryWatcher.Until?
    @Option(name: .customLong("rid"), help: ArgumentHelp("Show the status at these devices (repeatable).", valueName: "rid"))
    var registrationIDs: [String] = []
    @Flag(help: "With --rid: each device's delivery timeline, step by step.") var timeline = false

    @OptionGroup(title: "Connection") var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if messageIDs.isEmpty { throw ValidationError("Name at least one message id.") }
        if watch, !registrationIDs.isEmpty { throw ValidationError("--watch and --rid are exclusive.") }
        if watch || !registrationIDs.isEmpty, messageIDs.count > 1 {
            throw ValidationError("\(watch ? "--watch" : "--rid") takes exactly one message id.")
        }
        if until != nil, !watch { throw ValidationError("--until goes with --watch.") }
        if timeline, registrationIDs.isEmpty { throw ValidationError("--timeline goes with --rid.") }
        if let waitTimeout {
            if !watch { throw ValidationError("--wait-timeout goes with --watch.") }
            if waitTimeout <= 0 { throw ValidationError("--wait-timeout must be more than 0 seconds.") }
        }
    }

    func run() async throws {
        let client = try connection.client()
        if watch {
            let watcher = DeliveryWatcher(
                client: client,
                messageID: messageIDs[0],
                timeout: waitTimeout.map { .milliseconds(Int($0 * 1000)) },
                json: output.json,
                until: until ?? .settled
            )
            try await watcher.run()
        } else if timeline {
            try await timelines(client)
        } else if !registrationIDs.isEmpty {
            try await devices(client)
        } else {
            try await reports(client)
        }
    }

    /// The reports as a table; message ids the server doesn't know are named on stderr and
    /// make the exit status 1.
    private func reports(_ client: APIClient) async throws(CLIError) {
        let response = try await client.get("/v3/report/received", query: ["msg_ids": messageIDs.joined(separator: ",")], .app)
        let reports = try response.decode(ReceivedReports.self, url: client.connection.displayURL).reports
        let missing = messageIDs.filter { id in !reports.contains { $0.messageID == id } }
        try output.emit(response) { () throws(CLIError) in
            if reports.isEmpty { return "" }
            var table = TableRenderer([
                "MSG_ID", "TARGETED", "PENDING", "TCP", "APNS", "FCM", "FAILED", "WAITING", "OPENED", "RECALLED", "REPLACED", "EXPIRED", "DONE",
            ])
            for report in reports {
                let counts = [
                    report.targeted, report.pending, report.deliveredTCP, report.sentAPNs, report.sentFCM, report.failedAPNs, report.waiting,
                    report.opened,
                    report.recalled, report.replaced, report.expired,
                ]
                table.append([report.messageID] + counts.map(String.init) + [report.done ? "yes" : "no"])
            }
            let failures = reports.filter { !$0.apnsFailures.isEmpty }.map { "push service failures of \($0.messageID): \($0.failureSummary)" }
            return ([table.render()] + failures).joined(separator: "\n")
        }
        if !missing.isEmpty {
            throw .failed(missing.map { "no message \($0) in this app" }.joined(separator: "\nerror: "))
        }
    }

    private func devices(_ client: APIClient) async throws(CLIError) {
        struct Body: Encodable {
            var messageID: String
            var registrationIDs: [String]
            enum CodingKeys: String, CodingKey {
                case messageID = "msg_id"
                case registrationIDs = "registration_ids"
            }
        }
        let body = Body(messageID: messageIDs[0], registrationIDs: registrationIDs)
        let response = try await client.send("POST", "/v3/report/status/message", json: body, .app)
        try output.emit(response) { () throws(CLIError) in
            let statuses = try response.decode(MessageStatuses.self, url: client.connection.displayURL).statuses
            var table = TableRenderer(["REGISTRATION_ID", "STATUS", "APNS_REASON", "OPENED"])
            for registrationID in registrationIDs {
                let status = statuses[registrationID]
                table.append([
                    registrationID, status?.status ?? "-", status?.apnsReason ?? "-", status?.opened.map { $0 ? "yes" : "no" } ?? "-",
                ])
            }
            return table.render()
        }
    }

    /// Each device's timeline: a step per line (time, step, what it adds), under the
    /// device's registration id and where the steps come from.
    private func timelines(_ client: APIClient) async throws(CLIError) {
        for registrationID in registrationIDs {
            let path = "/v3/messages/\(APIClient.segment(messageIDs[0]))/devices/\(APIClient.segment(registrationID))"
            let response = try await client.get(path, .app)
            try output.emit(response) { () throws(CLIError) in
                guard let answer = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
                    let steps = answer["timeline"] as? [[String: Any]]
                else { throw .unexpectedResponse(status: response.status, url: client.connection.displayURL) }
                var table = TableRenderer(["AT", "STEP", "DETAILS"])
                for step in steps {
                    let data = (step["data"] as? [String: Any]) ?? [:]
                    let details = data.keys.sorted().map { "\($0)=\(data[$0].map { "\($0)" } ?? "")" }.joined(separator: " ")
                    table.append([step["at"] as? String ?? "-", step["type"] as? String ?? "-", details.isEmpty ? "-" : details])
                }
                let source = answer["source"] as? String ?? "-"
                let state = answer["state"] as? String ?? "-"
                return "\(registrationID)  state \(state)  (from \(source))\n" + table.render()
            }
        }
    }
}
