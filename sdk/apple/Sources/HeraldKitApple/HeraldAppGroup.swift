#if canImport(UserNotifications)
import Foundation
import HeraldKit

/// The files HeraldKit keeps in the App Group's container, where the app and its
/// Notification Service Extension both find them: the record of what arrived (so a message
/// is shown once, whichever process saw it first), the receipts on their way to Herald,
/// and the categories kept across launches.
///
/// ```swift
/// let group = HeraldAppGroup(directory: FileManager.default
///     .containerURL(forSecurityApplicationGroupIdentifier: "group.com.example.shop")!)
/// ```
public struct HeraldAppGroup: Sendable {
    public let directory: URL

    public init(directory: URL) {
        self.directory = directory
    }

    /// `herald-ledger.json`.
    public var ledger: FileLedgerStore {
        FileLedgerStore(url: directory.appendingPathComponent("herald-ledger.json"))
    }

    /// `herald-receipts.json`.
    public var receipts: ReceiptQueue {
        ReceiptQueue(url: directory.appendingPathComponent("herald-receipts.json"))
    }

    /// `herald-categories.json`.
    public var categories: CategoryStore {
        CategoryStore(directory: directory)
    }
}
#endif
