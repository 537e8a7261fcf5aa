import Foundation

/// Follows a message's delivery report until it settles: a progress bar redrawn in place
/// on a terminal, a line per change otherwise, only the final JSON with `--json`.
struct DeliveryWatcher {
    let client: APIClient
    let messageID: String
    var interval: Duration = .milliseconds(500)
    /// Give up after this long (exit status 75); `nil` waits until done or Ctrl-C.
    var timeout: Duration?
    var json: Bool
    /// When to stop following.
    var until: Until = .settled

    /// When a message counts as settled for the watcher.
    enum Until: String, CaseIterable, Sendable {
        /// Routing is over (the report's `done`): copies for offline devices may still wait in
        /// their inboxes.
        case routed
        /// Routing is over and no copy waits in an inbox: each reached its device, APNs, or an
        /// end (failed, expired, recalled, replaced).
        case settled

        func reached(_ report: ReceivedReport) -> Bool {
            switch self {
            case .routed: report.done
            case .settled: report.done && report.waiting == 0 && report.pending == 0
            }
        }
    }

    /// Polls until the report reaches `until`, and returns the last report.
    @discardableResult
    func run() async throws -> ReceivedReport {
        let live = !json && Terminal.stdoutIsTTY
        let bar = ProgressBar(color: Terminal.useColor, width: Terminal.width)
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now + $0 }
        var last: ReceivedReport?
        while true {
            let (report, body) = try await Self.fetch(client, messageID)
            if live {
                Terminal.write("\r\u{1B}[K" + bar.render(report))
            } else if !json, report != last {
                Terminal.print(ProgressBar.counts(report) + (report.done ? "  done" : ""))
            }
            if !json, report.done, report.waiting > 0, last.map({ !$0.done || $0.waiting != report.waiting }) ?? true {
                let copies = report.waiting == 1 ? "1 copy waits" : "\(report.waiting) copies wait"
                let more = until == .routed ? "heraldctl status \(messageID) --watch follows them" : "following them"
                Terminal.warn("\(live ? "\n" : "")routing is done; \(copies) in an inbox for an offline device (\(more))")
            }
            last = report
            if until.reached(report) {
                if live { Terminal.write("\n") }
                if json {
                    Terminal.printRaw(body)
                } else if !report.apnsFailures.isEmpty {
                    Terminal.print("apns failures: " + report.failureSummary)
                }
                return report
            }
            if let deadline, clock.now >= deadline {
                if live { Terminal.write("\n") }
                if json { Terminal.printRaw(body) }
                throw CLIError.timedOut("message \(messageID) had not settled after \(timeout.map(Self.describe) ?? "")")
            }
            try await Task.sleep(for: interval)
        }
    }

    /// The report of one message, and the API's JSON it came in.
    static func fetch(_ client: APIClient, _ messageID: String) async throws(CLIError) -> (ReceivedReport, Data) {
        let response = try await client.get("/v3/report/received", query: ["msg_ids": messageID], .app)
        let reports = try response.decode(ReceivedReports.self, url: client.connection.displayURL)
        guard let report = reports.reports.first(where: { $0.messageID == messageID }) else {
            throw .failed("no message \(messageID) in this app")
        }
        return (report, response.body)
    }

    private static func describe(_ duration: Duration) -> String {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
    }
}
