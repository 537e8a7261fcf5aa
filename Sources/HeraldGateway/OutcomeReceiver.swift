import NIOCore

/// Which delivery on a connection a wait is for: its inbox seq, or, for a message that is
/// not stored, the token its sender was given.
enum DeliveryKey: Hashable {
    case seq(Int64)
    case token(UInt64)

    init(_ outgoing: Outgoing) {
        self = outgoing.seq.map { .seq($0) } ?? .token(outgoing.token)
    }
}

/// Who learns the outcome of one delivery: its slot in the batch it was sent with. Lives
/// on the connection's event loop.
struct OutcomeReceiver {
    var batch: OutcomeBatch
    var slot: Int

    /// Reports the outcome; each receiver is resolved exactly once.
    func resolve(_ outcome: DeliveryOutcome) {
        batch.resolve(slot, outcome)
    }
}

/// The outcomes of the deliveries one call hands to an event loop, reported together: one
/// promise for the lot instead of a promise and a mapped future per delivery.
final class OutcomeBatch {
    private var outcomes: [DeliveryOutcome]
    private var remaining: Int
    private let promise: EventLoopPromise<[DeliveryOutcome]>

    /// A batch of `count` slots; `promise` gets their outcomes, by slot, once all are in.
    init(count: Int, promise: EventLoopPromise<[DeliveryOutcome]>) {
        self.outcomes = Array(repeating: .notConnected, count: count)
        self.remaining = count
        self.promise = promise
        if count == 0 { promise.succeed([]) }
    }

    func resolve(_ slot: Int, _ outcome: DeliveryOutcome) {
        outcomes[slot] = outcome
        remaining -= 1
        if remaining == 0 { promise.succeed(outcomes) }
    }
}
