import Foundation
import NIOConcurrencyHelpers

/// The silent recall pushes this node sent lately, so a device gets one per recall.
///
/// A recall by identifier recalls every message with that identifier (an original and its
/// replacement, or two pushes that shared it) and queues a recall job per message; each
/// job's push to a device carries every identifier pending on it, so two jobs sent the
/// same push twice, and Apple throttles background pushes. The second is skipped here.
final class RecentRecallPushes: Sendable {
    private struct Key: Hashable {
        var deviceID: Int64
        var token: String
        var identifiers: [String]
    }

    private let window: TimeInterval
    private let sent = NIOLockedValueBox<[Key: Date]>([:])

    /// - Parameter window: how long a push counts as recent.
    init(window: Duration) {
        self.window = window.seconds
    }

    /// Claims the push of `identifiers` to a device: true when no push of the same
    /// identifiers went to its token within the window (the caller sends it), else false.
    func claim(deviceID: Int64, token: String, identifiers: [String], now: Date = Date()) -> Bool {
        let key = Key(deviceID: deviceID, token: token, identifiers: identifiers.sorted())
        return sent.withLockedValue { sent in
            if let at = sent[key], now.timeIntervalSince(at) < window { return false }
            if sent.count >= 10_000 { sent = sent.filter { now.timeIntervalSince($0.value) < window } }
            sent[key] = now
            return true
        }
    }

    /// The push could not be sent: a later job may send it.
    func release(deviceID: Int64, token: String, identifiers: [String]) {
        let key = Key(deviceID: deviceID, token: token, identifiers: identifiers.sorted())
        sent.withLockedValue { _ = $0.removeValue(forKey: key) }
    }
}
