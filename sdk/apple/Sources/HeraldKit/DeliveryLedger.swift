import Foundation
import NIOConcurrencyHelpers

/// One record of what arrived, keyed by msg_id, shared by every way a message reaches the
/// device: its copy over the long connection, its APNs notification (in the app, or in
/// the Notification Service Extension, another process), a replay after a reconnect. The
/// first arrival is shown; every later one, whichever channel it came by, is not.
///
/// Kept in a ``LedgerStore`` (an App Group file on iOS, so the extension and the app see
/// one ledger); remembers the most recent ``capacity`` ids, which covers every copy Herald
/// may still send twice (its inbox replays what the device didn't acknowledge, for at most
/// the push's time to live).
public struct DeliveryLedger: Sendable {
    /// How a copy arrived.
    public enum Channel: String, Sendable, Hashable, Codable {
        case connection
        case apns
    }

    /// One message's entry: how it first arrived.
    public struct Entry: Sendable, Hashable, Codable {
        public var msgID: String
        public var channel: Channel
    }

    public let capacity: Int
    /// Oldest first.
    private(set) var entries: [Entry]
    private var index: [String: Channel]

    public init(capacity: Int = 2_000, entries: [Entry] = []) {
        self.capacity = max(1, capacity)
        let kept = Array(entries.suffix(self.capacity))
        self.entries = kept
        self.index = Dictionary(kept.map { ($0.msgID, $0.channel) }, uniquingKeysWith: { first, _ in first })
    }

    /// Records that `msgID` arrived by `channel`: true the first time (show it), false for
    /// any later copy.
    public mutating func arrived(_ msgID: String, via channel: Channel) -> Bool {
        guard index[msgID] == nil else { return false }
        index[msgID] = channel
        entries.append(Entry(msgID: msgID, channel: channel))
        if entries.count > capacity {
            let dropped = entries.count - capacity
            for entry in entries.prefix(dropped) { index[entry.msgID] = nil }
            entries.removeFirst(dropped)
        }
        return true
    }

    /// How `msgID` first arrived, if it did.
    public func channel(of msgID: String) -> Channel? { index[msgID] }
}

/// Where the ledger is kept across launches and between the app and its extension. An
/// update reads, changes and writes it as one step, also against another process.
public protocol LedgerStore: Sendable {
    func update<Result>(_ body: (inout DeliveryLedger) -> Result) throws -> Result
}

extension LedgerStore {
    /// Records that `msgID` arrived by `channel`: true the first time (show it).
    public func arrived(_ msgID: String, via channel: DeliveryLedger.Channel) throws -> Bool {
        try update { $0.arrived(msgID, via: channel) }
    }
}

/// A JSON file (in the App Group's container on iOS), changed under ``LockedJSONFile``.
public struct FileLedgerStore: LedgerStore {
    public let file: LockedJSONFile<[DeliveryLedger.Entry]>
    public let capacity: Int

    public init(url: URL, capacity: Int = 2_000) {
        self.file = LockedJSONFile(url: url, empty: [])
        self.capacity = capacity
    }

    public func update<Result>(_ body: (inout DeliveryLedger) -> Result) throws -> Result {
        try file.update { entries in
            var ledger = DeliveryLedger(capacity: capacity, entries: entries)
            let result = body(&ledger)
            entries = ledger.entries
            return result
        }
    }
}

/// Kept in memory only (tests; a client without a container).
public struct InMemoryLedgerStore: LedgerStore {
    private let ledger: NIOLockedValueBox<DeliveryLedger>

    public init(capacity: Int = 2_000) {
        ledger = NIOLockedValueBox(DeliveryLedger(capacity: capacity))
    }

    public func update<Result>(_ body: (inout DeliveryLedger) -> Result) -> Result {
        ledger.withLockedValue(body)
    }
}
