import Foundation
import HeraldCore
import NIOConcurrencyHelpers

/// The silent recall pushes this node sent lately, so a device gets one per recall.
///
/// A recall by identifier recalls every message with that identifier (an original and its
/// replacement, or two pushes that shared it) and queues a recall job per message; each
/// job's push to a device carries every identifier pending on it, so two jobs sent the
/// same push twice, and Apple throttles background pushes. The second is skipped here.
///
/// Per device, only the last push is kept, as a hash of its token, identifiers and recall
/// time (a few dozen bytes a device), and pushes older than the window are dropped once a
/// minute. The recall time tells the jobs of one recall (same time) from a later recall of
/// the same identifiers, which must reach the device again.
final class RecentRecallPushes: Sendable {
    private struct State {
        var sent: [Int64: (fingerprint: Int, at: Date)] = [:]
        var prunedAt = Date.distantPast
    }

    private let window: TimeInterval
    private let state = NIOLockedValueBox(State())

    /// - Parameter window: how long a push counts as recent.
    init(window: Duration) {
        self.window = window.timeInterval
    }

    /// Claims the push of `identifiers` to a device: true when the same identifiers did
    /// not go to its token within the window (the caller sends them), else false.
    func claim(deviceID: Int64, token: String, identifiers: [String], recalledAt: Date, now: Date = Date()) -> Bool {
        let fingerprint = Self.fingerprint(token: token, identifiers: identifiers, recalledAt: recalledAt)
        return state.withLockedValue { state in
            if now.timeIntervalSince(state.prunedAt) >= 60 {
                state.sent = state.sent.filter { now.timeIntervalSince($0.value.at) < window }
                state.prunedAt = now
            }
            if let last = state.sent[deviceID], last.fingerprint == fingerprint, now.timeIntervalSince(last.at) < window {
                return false
            }
            state.sent[deviceID] = (fingerprint, now)
            return true
        }
    }

    /// The push could not be sent: a later job may send it.
    func release(deviceID: Int64, token: String, identifiers: [String], recalledAt: Date) {
        let fingerprint = Self.fingerprint(token: token, identifiers: identifiers, recalledAt: recalledAt)
        state.withLockedValue { state in
            if state.sent[deviceID]?.fingerprint == fingerprint { state.sent[deviceID] = nil }
        }
    }

    private static func fingerprint(token: String, identifiers: [String], recalledAt: Date) -> Int {
        var hasher = Hasher()
        hasher.combine(token)
        hasher.combine(identifiers.sorted())
        hasher.combine(recalledAt)
        return hasher.finalize()
    }
}
