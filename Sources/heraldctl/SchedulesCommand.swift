import ArgumentParser
import Foundation

/// `heraldctl schedules`: pushes sent later (JPush's schedule API). `heraldctl push --at`
/// and `--every` make them from push flags.
struct SchedulesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schedules",
        abstract: "Create, list, show, enable, disable and delete scheduled pushes (app key and master secret).",
        discussion: """
            A schedule fires its push once (--at) or periodically (--every), in the schedule's \
            zone or the app's, or at its wall time in each device's zone (--local-time). \
            `heraldctl push ... --at` or `--every` makes one from push flags; `schedules create` \
            takes a whole schedule object (JPush's shape) from a file.
            """,
        subcommands: [Create.self, List.self, Show.self, Enable.self, Disable.self, Delete.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a schedule from a JSON object (JPush's shape: name, enabled, trigger, push).",
            discussion: "Example: heraldctl schedules create --body schedule.json"
        )

        @Option(help: ArgumentHelp("The schedule object: a file, or - for stdin.", valueName: "file")) var body: String

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let data: Data
            if body == "-" {
                data = FileHandle.standardInput.readDataToEndOfFile()
            } else {
                guard let contents = FileManager.default.contents(atPath: body) else { throw CLIError.usage("cannot read \(body)") }
                data = contents
            }
            let client = try connection.client()
            let response = try await client.send("POST", "/v3/schedules", body: data, .app)
            let created = try response.decode(ScheduleCreated.self, url: client.connection.displayURL)
            try output.emit(response) {
                TableRenderer.fields([("schedule_id", created.scheduleID), ("name", TableRenderer.safe(created.name))])
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the active schedules, 50 a page, oldest first.")

        @Option(help: "The page, from 1.") var page = 1

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func validate() throws {
            if page < 1 { throw ValidationError("--page starts at 1.") }
        }

        func run() async throws {
            let client = try connection.client()
            let response = try await client.get("/v3/schedules", query: ["page": "\(page)"], .app)
            try output.emit(response) { () throws(CLIError) in
                let list = try response.decode(ScheduleList.self, url: client.connection.displayURL)
                if list.schedules.isEmpty { return list.totalCount == 0 ? "no schedules" : "no schedules on page \(page) of \(list.totalPages)" }
                var table = TableRenderer(["SCHEDULE_ID", "NAME", "ENABLED", "WHEN", "NEXT"])
                for schedule in list.schedules {
                    table.append([
                        schedule.scheduleID, TableRenderer.safe(schedule.name), schedule.enabled ? "yes" : "no",
                        TableRenderer.safe(schedule.when), schedule.nextFireAt ?? "-",
                    ])
                }
                let footer = list.totalPages > 1 ? "\npage \(list.page) of \(list.totalPages) (\(list.totalCount) schedules)" : ""
                return table.render() + footer
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a schedule and what each of its occurrences became.")

        @Argument(help: "The schedule id.") var scheduleID: String

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            let path = "/v3/schedules/\(APIClient.segment(scheduleID))"
            // A finished schedule (8104) has no definition to show, but its history stays.
            let response = try await SchedulesCommand.unlessFinished(client, path)
            let runs = try await client.get(path + "/msg_ids", .app)
            try output.emit(response ?? runs) { () throws(CLIError) in
                let history = try runs.decode(ScheduleRuns.self, url: client.connection.displayURL)
                var text: String
                if let response {
                    let schedule = try response.decode(ScheduleSummary.self, url: client.connection.displayURL)
                    text = TableRenderer.fields([
                        ("schedule_id", schedule.scheduleID), ("name", TableRenderer.safe(schedule.name)),
                        ("enabled", schedule.enabled ? "yes" : "no"), ("when", TableRenderer.safe(schedule.when)),
                        ("time_zone", TableRenderer.safe(schedule.timeZone ?? "the app's")), ("next", schedule.nextFireAt ?? "-"),
                    ])
                } else {
                    text = TableRenderer.fields([("schedule_id", scheduleID), ("state", "finished (fires no more)")])
                }
                if history.runs.isEmpty { return text + "\nno occurrence yet" }
                var table = TableRenderer(["OCCURRENCE", "ZONE", "STATE", "MSG_ID"])
                for run in history.runs {
                    table.append([run.occurrence, TableRenderer.safe(run.timeZone ?? "-"), run.state, run.msgID ?? "-"])
                }
                return text + "\n\n" + table.render()
            }
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a schedule: it fires from its next occurrence on.")

        @Argument(help: "The schedule id.") var scheduleID: String

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws { try await SchedulesCommand.setEnabled(true, scheduleID, connection, output) }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable a schedule: it fires no more until enabled.")

        @Argument(help: "The schedule id.") var scheduleID: String

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws { try await SchedulesCommand.setEnabled(false, scheduleID, connection, output) }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a schedule and its history.")

        @Argument(help: "The schedule id.") var scheduleID: String

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            let response = try await client.delete("/v3/schedules/\(APIClient.segment(scheduleID))", .app)
            try output.emit(response) { "deleted schedule \(scheduleID)" }
        }
    }

    /// JPush's code for no such (or a finished) schedule.
    static let scheduleNotFound = 8104

    /// The schedule, or nil when it has finished (or never existed: its msg_ids say which).
    static func unlessFinished(_ client: APIClient, _ path: String) async throws(CLIError) -> APIClient.Response? {
        do {
            return try await client.get(path, .app)
        } catch {
            if error.apiCode == scheduleNotFound { return nil }
            throw error
        }
    }

    static func setEnabled(_ enabled: Bool, _ scheduleID: String, _ connection: ConnectionOptions, _ output: OutputOptions) async throws {
        struct Change: Encodable { var enabled: Bool }
        let client = try connection.client()
        let response = try await client.send("PUT", "/v3/schedules/\(APIClient.segment(scheduleID))", json: Change(enabled: enabled), .app)
        try output.emit(response) { "\(enabled ? "enabled" : "disabled") schedule \(scheduleID)" }
    }
}
