import ArgumentParser
import Foundation

/// `heraldctl devices import FILE --app KEY`: an app's devices brought over from JPush.
struct DevicesImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import an app's devices from an NDJSON or CSV file (admin token).",
        discussion: """
            The file is streamed to the server, which writes it in batches as it arrives and \
            upserts each row by registration id: if the transfer breaks, send the same file \
            again; nothing is written twice. Rows the server rejects are listed with their line \
            numbers; the others are imported. See docs/migrating-from-jpush.md for the columns.

            Example: heraldctl devices import devices.csv --app 0123456789abcdef01234567
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case ndjson, csv

        var mediaType: String {
            switch self {
            case .ndjson: "application/x-ndjson"
            case .csv: "text/csv"
            }
        }
    }

    @Argument(help: ArgumentHelp("The file: NDJSON (one JSON object a line) or CSV with a header row.", valueName: "file"))
    var file: String
    @Option(help: ArgumentHelp("The app key of the app to import into.", valueName: "key")) var app: String
    @Option(help: "The file's format (default: from its extension, .csv for CSV, anything else NDJSON).") var format: Format?

    @OptionGroup(title: "Connection") var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let client = try connection.client()
        let url = URL(fileURLWithPath: file)
        guard FileManager.default.isReadableFile(atPath: url.path) else { throw CLIError.usage("cannot read \(file)") }
        let format = format ?? (url.pathExtension.lowercased() == "csv" ? .csv : .ndjson)
        let response = try await client.upload(
            "POST",
            "/admin/v1/apps/\(APIClient.segment(app))/devices/import",
            file: url,
            contentType: format.mediaType,
            .admin
        )
        try output.emit(response) { () throws(CLIError) in
            let result = try response.decode(DeviceImportResult.self, url: client.connection.displayURL)
            return result.rendered
        }
    }
}

/// `POST /admin/v1/apps/{app_key}/devices/import` → 200.
struct DeviceImportResult: Decodable {
    struct Rejection: Decodable {
        var line: Int
        var registrationID: String?
        var reason: String

        enum CodingKeys: String, CodingKey {
            case line, reason
            case registrationID = "registration_id"
        }
    }

    var rows: Int
    var created: Int
    var updated: Int
    var unchanged: Int
    var rejected: Int
    var rejectedRows: [Rejection]
    var rejectedRowsTruncated: Bool

    enum CodingKeys: String, CodingKey {
        case rows, created, updated, unchanged, rejected
        case rejectedRows = "rejected_rows"
        case rejectedRowsTruncated = "rejected_rows_truncated"
    }

    /// The counts, then a table of the rejected rows.
    var rendered: String {
        var text = TableRenderer.fields([
            ("rows", "\(rows)"), ("created", "\(created)"), ("updated", "\(updated)"), ("unchanged", "\(unchanged)"),
            ("rejected", "\(rejected)"),
        ])
        guard !rejectedRows.isEmpty else { return text }
        var table = TableRenderer(["LINE", "REGISTRATION_ID", "REASON"])
        for row in rejectedRows { table.append(["\(row.line)", row.registrationID ?? "-", row.reason]) }
        text += "\n\n" + table.render()
        if rejectedRowsTruncated { text += "\n(\(rejected - rejectedRows.count) more rejected rows not listed)" }
        return text
    }
}
