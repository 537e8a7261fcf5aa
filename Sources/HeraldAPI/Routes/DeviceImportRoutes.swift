import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird
import Logging

/// `POST /admin/v1/apps/{app_key}/devices/import`: an app's devices brought over from
/// JPush in one file, NDJSON or CSV, behind the admin token.
///
/// The admin token, not the app's master secret: an import writes devices that have no
/// secret yet (an installation claims its registration by naming it), which is a step of
/// setting the app up, like creating it with its JPush credentials.
///
/// The body is read as it arrives and written in batches (``DeviceImport``): a file of
/// any size takes constant memory, and what was written stays written if the connection
/// breaks. Every row is an upsert by registration id, so the same file, or what is left of
/// it, can be sent again.
struct DeviceImportRoutes {
    static let path = "/admin/v1/apps/{app_key}/devices/import"
    /// Longest line of a file: 1,000 tags of 40 bytes, quoted, fit with room to spare.
    static let maxLineBytes = 128 * 1024
    /// Rejected rows listed in an answer (all are counted).
    static let maxListedRejections = 1000

    let store: APIStore
    let auth: Authentication
    let batchSize: Int

    func register(on routes: inout RouteRegistrar) {
        routes.on(.post, Self.path, access: .admin, use: importDevices)
    }

    /// Whether a request head is an import: its body gets a deadline per chunk, not for
    /// the whole (``HTTPDeadlines``).
    static func isStreamedUpload(_ head: HTTPRequest) -> Bool {
        guard head.method == .post, let path = head.path else { return false }
        let route = path.split(separator: "?", maxSplits: 1)[0]
        return route.hasPrefix("/admin/v1/apps/") && route.hasSuffix("/devices/import")
    }

    @Sendable func importDevices(_ request: Request, context: HeraldRequestContext) async throws -> DeviceImportResponse {
        try await auth.requireAdmin(request)
        let app = try await AdminRoutes.app(context, in: store)
        guard let contentType = request.headers[.contentType], let format = DeviceImportFormat(contentType: contentType) else {
            throw HeraldError(.unsupportedMediaType, "Content-Type: expected application/x-ndjson or text/csv")
        }
        var splitter = ImportLineSplitter(maxLineBytes: Self.maxLineBytes)
        var session = DeviceImport(
            store: store,
            appID: app.id,
            format: format,
            batchSize: batchSize,
            maxListed: Self.maxListedRejections
        )
        for try await chunk in request.body {
            for line in chunk.withUnsafeReadableBytes({ splitter.feed($0) }) {
                try await session.take(line)
            }
        }
        for line in splitter.finish() {
            try await session.take(line)
        }
        try await session.finish()
        let totals = session.totals
        context.logger.info(
            "devices imported",
            metadata: [
                "herald.app_key": "\(app.appKey)", "herald.import.rows": "\(totals.rows)", "herald.import.created": "\(totals.created)",
                "herald.import.updated": "\(totals.updated)", "herald.import.rejected": "\(totals.rejected)",
            ]
        )
        return DeviceImportResponse(totals)
    }
}

/// The answer to an import: counts, and the first rejected rows with their line numbers.
struct DeviceImportResponse: ResponseEncodable {
    struct Rejection: Encodable {
        var line: Int
        var registrationId: String?
        var reason: String
    }

    var rows: Int
    var created: Int
    var updated: Int
    var unchanged: Int
    var rejected: Int
    var rejectedRows: [Rejection]
    /// More rows were rejected than are listed.
    var rejectedRowsTruncated: Bool

    init(_ totals: DeviceImportTotals) {
        rows = totals.rows
        created = totals.created
        updated = totals.updated
        unchanged = totals.unchanged
        rejected = totals.rejected
        rejectedRows = totals.rejectedRows.sorted { $0.line < $1.line }.map {
            Rejection(line: $0.line, registrationId: $0.registrationID, reason: $0.reason)
        }
        rejectedRowsTruncated = totals.rejected > totals.rejectedRows.count
    }
}
