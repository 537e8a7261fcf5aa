import DequeModule
import HeraldCore
import NIOConcurrencyHelpers

/// The pushes this process accepted last, validated, by message id: the message center
/// running in the same process takes them from here instead of decoding each stored
/// request again. Bounded; a push not here (accepted by another node, or long ago) is
/// decoded from the database as before.
final class RecentPushes: Sendable {
    private let capacity: Int
    private let state = NIOLockedValueBox(State())

    private struct State {
        var pushes: [String: Push] = [:]
        var order: Deque<String> = []
    }

    init(capacity: Int = 4096) {
        self.capacity = capacity
    }

    func remember(_ push: Push, msgID: String) {
        state.withLockedValue { state in
            guard state.pushes.updateValue(push, forKey: msgID) == nil else { return }
            state.order.append(msgID)
            while state.order.count > capacity, let oldest = state.order.popFirst() {
                state.pushes.removeValue(forKey: oldest)
            }
        }
    }

    func push(msgID: String) -> Push? {
        state.withLockedValue { $0.pushes[msgID] }
    }
}
