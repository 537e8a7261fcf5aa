import Foundation
import NIOConcurrencyHelpers

/// What the device tells Herald about a message after it arrived: that the Notification
/// Service Extension ran (`delivered`: the device got it, not just APNs), that it was
/// shown, dismissed (a category with `customDismissAction`), opened, or that one of its
/// actions was tapped; or that the SDK dropped what arrived, and why (a payload it could
/// not read, a category that doesn't parse).
public struct Receipt: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable {
        case delivered, displayed, dismissed, opened, action, dropped
    }

    /// Names this receipt, so a receipt sent twice (its answer lost) counts once.
    public var id: UUID
    public var msgID: String
    public var kind: Kind
    /// The action's identifier, for `action`.
    public var action: String?
    /// Why it was dropped, for `dropped` (at most ``maxReasonLength`` Unicode scalars).
    public var reason: String?
    public var at: Date

    /// The longest reason Herald takes, in Unicode scalars.
    public static let maxReasonLength = 200

    public init(msgID: String, kind: Kind, action: String? = nil, reason: String? = nil, at: Date = Date(), id: UUID = UUID()) {
        self.id = id
        self.msgID = msgID
        self.kind = kind
        self.action = action
        self.reason = reason.map { Self.truncated($0) }
        self.at = at
    }

    /// `text` cut to ``maxReasonLength`` Unicode scalars, on a character's boundary, its
    /// control characters (a reason may quote what arrived) as spaces.
    static func truncated(_ text: String) -> String {
        var result = ""
        var scalars = 0
        for character in text {
            let clean = character.unicodeScalars.contains { $0.properties.generalCategory == .control } ? " " : character
            scalars += clean.unicodeScalars.count
            guard scalars <= maxReasonLength else { break }
            result.append(clean)
        }
        return result
    }

    enum CodingKeys: String, CodingKey {
        case id
        case kind = "type"
        case action, reason, at
        case msgID = "msg_id"
    }
}

/// Receipts on their way to Herald, kept until Herald took them: in a file (``LockedJSONFile``
/// in the App Group, so the extension adds its `delivered` receipts to the app's queue)
/// or in memory. A receipt stays until a send of it succeeded, so a lost connection or a
/// killed app loses none; one sent whose answer was lost is sent again with its id, which
/// Herald takes as the same receipt.
public struct ReceiptQueue: Sendable {
    /// Receipts kept at most: the oldest go first past this (a device offline for weeks).
    public static let capacity = 1_000
    /// Receipts per request.
    public static let batch = 100

    private let file: LockedJSONFile<[Receipt]>?
    private let memory: NIOLockedValueBox<[Receipt]>?

    /// A queue kept in `url` (nil: in memory).
    public init(url: URL?) {
        file = url.map { LockedJSONFile(url: $0, empty: []) }
        memory = url == nil ? NIOLockedValueBox([]) : nil
    }

    private func update<Result>(_ body: (inout [Receipt]) -> Result) throws -> Result {
        if let file { return try file.update(body) }
        return memory!.withLockedValue(body)
    }

    /// Queues a receipt.
    public func add(_ receipt: Receipt) throws {
        try update { receipts in
            guard !receipts.contains(where: { $0.msgID == receipt.msgID && $0.kind == receipt.kind && $0.action == receipt.action })
            else { return }
            receipts.append(receipt)
            if receipts.count > Self.capacity { receipts.removeFirst(receipts.count - Self.capacity) }
        }
    }

    /// The receipts waiting, oldest first.
    public func pending() throws -> [Receipt] {
        try update { $0 }
    }

    /// Sends what waits, a batch at a time, with `send` (Herald's receipts endpoint);
    /// each batch leaves the queue only once `send` returned. Returns how many were sent;
    /// throws what `send` threw, with the rest still queued.
    @discardableResult
    public func flush(_ send: ([Receipt]) async throws -> Void) async throws -> Int {
        var sent = 0
        while true {
            let batch = try update { Array($0.prefix(Self.batch)) }
            guard !batch.isEmpty else { return sent }
            try await send(batch)
            let ids = Set(batch.map(\.id))
            try update { $0.removeAll { ids.contains($0.id) } }
            sent += batch.count
        }
    }

    /// How long to wait before sending receipts made now: up to `spread`, at random, so a
    /// push to millions doesn't bring back millions of receipts in the same second.
    public static func delay<G: RandomNumberGenerator>(spread: Duration = .seconds(30), using generator: inout G) -> Duration {
        .milliseconds(Int64.random(in: 0...Int64(spread.components.seconds * 1000), using: &generator))
    }

}
