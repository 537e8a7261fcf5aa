import HeraldStore
import NIOConcurrencyHelpers
import NIOCore

/// Deliveries handed to their connections' event loops, whose outcomes are still to come.
struct HandedOver: Sendable {
    fileprivate var count: Int
    /// Per event loop: the indices of its deliveries, and their outcomes, by slot.
    fileprivate var batches: [(indices: [Int], outcomes: EventLoopFuture<[DeliveryOutcome]>)]

    /// Waits for every outcome, in the order the deliveries were handed over (a device not
    /// connected here is `.notConnected`).
    func outcomes() async throws -> [DeliveryOutcome] {
        var outcomes = [DeliveryOutcome](repeating: .notConnected, count: count)
        for (indices, future) in batches {
            for (slot, outcome) in try await future.get().enumerated() { outcomes[indices[slot]] = outcome }
        }
        return outcomes
    }
}

extension GatewayContext {
    /// Hands each delivery to the event loop of its device's connection (one task per loop
    /// for the lot), without waiting. Deliveries handed over by one thread reach each
    /// connection in that order.
    func handOver(_ deliveries: [GatewayDelivery], ackTimeout: Duration) -> HandedOver {
        var batches:
            [ObjectIdentifier: (loop: any EventLoop, items: [(index: Int, handle: ConnectionHandle, key: RegistrationKey, outgoing: Outgoing)])] = [:]
        let firstToken = tokens.withLockedValue { token -> UInt64 in
            defer { token &+= UInt64(deliveries.count) }
            return token &+ 1
        }
        let keys = deliveries.map { RegistrationKey($0.device.registrationID) }
        let handles = registry.connections(keys)
        for (index, delivery) in deliveries.enumerated() {
            guard let handle = handles[index] else { continue }
            let outgoing = Outgoing(
                seq: delivery.seq,
                msgID: delivery.message.msgID,
                payload: delivery.message.payload,
                dup: mayHaveBeenSentBeforeStart(delivery.message.msgID),
                token: firstToken &+ UInt64(index)
            )
            batches[ObjectIdentifier(handle.eventLoop), default: (handle.eventLoop, [])].items.append((index, handle, keys[index], outgoing))
        }
        return HandedOver(
            count: deliveries.count,
            batches: batches.values.map { batch in
                let outcomes = batch.loop.flatSubmit {
                    let promise = batch.loop.makePromise(of: [DeliveryOutcome].self)
                    let slots = OutcomeBatch(count: batch.items.count, promise: promise)
                    for (slot, item) in batch.items.enumerated() {
                        let receiver = OutcomeReceiver(batch: slots, slot: slot)
                        guard let handler = self.handler(item.handle, key: item.key) else {
                            receiver.resolve(.notConnected)
                            continue
                        }
                        handler.deliver(item.outgoing, to: receiver, timeout: ackTimeout)
                    }
                    return promise.futureResult
                }
                return (batch.items.map(\.index), outcomes)
            }
        )
    }
}
