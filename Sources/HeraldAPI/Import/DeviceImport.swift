import HeraldCore
import HeraldStore

/// One import request as it is read: rows gathered into batches, each batch written as
/// soon as it is full (``APIStore/importDevices(appID:_:)``), the totals kept.
///
/// It holds one batch at a time, so a file of any length is imported in constant memory.
/// A batch is also written early when a row names a device already in it: the later row
/// then updates what the earlier one wrote, as it would in a later request.
struct DeviceImport {
    let store: APIStore
    let appID: Int64
    let batchSize: Int
    /// Rejected rows listed in the answer; the others are only counted.
    let maxListed: Int
    private(set) var reader: DeviceImportReader
    private var batch: [ImportedDevice] = []
    private var batchIDs = Set<String>()
    private(set) var totals = DeviceImportTotals()

    init(store: APIStore, appID: Int64, format: DeviceImportFormat, batchSize: Int, maxListed: Int) {
        self.store = store
        self.appID = appID
        self.batchSize = max(1, batchSize)
        self.maxListed = maxListed
        self.reader = DeviceImportReader(format: format)
    }

    /// Reads one line of the file; writes the batch when it is full.
    mutating func take(_ line: ImportLineSplitter.Line) async throws {
        switch try reader.read(line) {
        case .nothing:
            break
        case .rejected(let row):
            totals.rows += 1
            reject(row)
        case .device(let device):
            totals.rows += 1
            if batchIDs.contains(device.registrationID) { try await flush() }
            batch.append(device)
            batchIDs.insert(device.registrationID)
            if batch.count >= batchSize { try await flush() }
        }
    }

    /// Writes what is left; throws when the body had no row (or no CSV header) at all.
    mutating func finish() async throws {
        try reader.checkStarted()
        try await flush()
    }

    private mutating func flush() async throws {
        guard !batch.isEmpty else { return }
        let outcome = try await store.devices.importDevices(appID: appID, batch)
        batch.removeAll(keepingCapacity: true)
        batchIDs.removeAll(keepingCapacity: true)
        totals.created += outcome.created
        totals.updated += outcome.updated
        totals.unchanged += outcome.unchanged
        for row in outcome.rejected { reject(row) }
    }

    private mutating func reject(_ row: RejectedImportRow) {
        totals.rejected += 1
        if totals.rejectedRows.count < maxListed { totals.rejectedRows.append(row) }
    }
}

/// What an import did, over all its batches.
struct DeviceImportTotals: Sendable {
    /// Rows read (blank lines and the CSV header aside).
    var rows = 0
    var created = 0
    var updated = 0
    var unchanged = 0
    var rejected = 0
    /// The first rejected rows found (at most ``DeviceImport/maxListed``).
    var rejectedRows: [RejectedImportRow] = []
}
