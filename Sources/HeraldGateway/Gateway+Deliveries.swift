import Foundation
import HeraldStore
import NIOConcurrencyHelpers
import NIOCore

extension Gateway {
    /// Delivers a message to a device and waits for the outcome.
    ///
    /// A message with a time to live is stored in the device's inbox first, so it reaches
    /// the device on its next connection if it isn't acknowledged now. A message with a
    /// time to live of zero is only sent to a device connected now.
    public func deliver(_ message: GatewayMessage, to device: GatewayDevice, ackTimeout: Duration = .seconds(10)) async throws -> DeliveryOutcome {
        var seq: Int64?
        if message.timeToLive > .zero {
            let expiresAt = Date().addingTimeInterval(Double(message.timeToLive.components.seconds))
            let stored = try await context.store.enqueue(
                deviceID: device.deviceID,
                messageID: message.messageID,
                payload: Array(buffer: message.payload),
                expiresAt: expiresAt
            )
            seq = stored?.seq
        }
        return try await send([GatewayDelivery(message: message, device: device, seq: seq)], ackTimeout: ackTimeout)[0]
    }

    /// Delivers one message to many devices (a broadcast) and waits for every outcome, in
    /// the order of `devices`.
    ///
    /// A stored message goes into every inbox with one statement; the copies are then
    /// handed to each event loop in one batch, sharing the payload's bytes.
    public func deliver(_ message: GatewayMessage, to devices: [GatewayDevice], ackTimeout: Duration = .seconds(10)) async throws -> [DeliveryOutcome]
    {
        var seqs: [Int64: Int64] = [:]
        if message.timeToLive > .zero {
            let expiresAt = Date().addingTimeInterval(Double(message.timeToLive.components.seconds))
            seqs = try await context.store.enqueue(
                deviceIDs: devices.map(\.deviceID),
                messageID: message.messageID,
                payload: Array(buffer: message.payload),
                expiresAt: expiresAt
            )
        }
        return try await send(message, to: devices, seqs: seqs, ackTimeout: ackTimeout)
    }

    /// Sends a message the caller already stored in each device's inbox (`seqs`: device id
    /// → position; a device without one gets it unstored) to the devices connected here,
    /// and waits for every outcome, in the order of `devices`.
    public func send(
        _ message: GatewayMessage,
        to devices: [GatewayDevice],
        seqs: [Int64: Int64],
        ackTimeout: Duration = .seconds(10)
    ) async throws -> [DeliveryOutcome] {
        try await send(devices.map { GatewayDelivery(message: message, device: $0, seq: seqs[$0.deviceID]) }, ackTimeout: ackTimeout)
    }

    /// Sends each delivery (its message, already stored at `seq` in the device's inbox, or
    /// unstored) to its device if it is connected here, and waits for every outcome, in
    /// order: the message center hands over a batch of pushes in one call.
    ///
    /// The deliveries for one event loop go to it in one task and report through one
    /// batch, so a batch costs one hop per loop, not one per delivery.
    public func send(_ deliveries: [GatewayDelivery], ackTimeout: Duration = .seconds(10)) async throws -> [DeliveryOutcome] {
        var outcomes = [DeliveryOutcome](repeating: .notConnected, count: deliveries.count)
        var batches: [ObjectIdentifier: (loop: any EventLoop, items: [(index: Int, handle: ConnectionHandle, outgoing: Outgoing)])] = [:]
        let firstToken = tokens.withLockedValue { token -> UInt64 in
            defer { token &+= UInt64(deliveries.count) }
            return token &+ 1
        }
        let handles = context.registry.connections(deliveries.lazy.map(\.device.registrationID))
        for (index, delivery) in deliveries.enumerated() {
            guard let handle = handles[index] else { continue }
            let outgoing = Outgoing(
                seq: delivery.seq,
                messageID: delivery.message.messageID,
                payload: delivery.message.payload,
                dup: false,
                token: firstToken &+ UInt64(index)
            )
            batches[ObjectIdentifier(handle.eventLoop), default: (handle.eventLoop, [])].items.append((index, handle, outgoing))
        }
        let perLoop = Array(batches.values)
        let futures = perLoop.map { batch in
            batch.loop.flatSubmit {
                let promise = batch.loop.makePromise(of: [DeliveryOutcome].self)
                let slots = OutcomeBatch(count: batch.items.count, promise: promise)
                for (slot, item) in batch.items.enumerated() {
                    item.handle.handler.value.deliver(item.outgoing, to: OutcomeReceiver(batch: slots, slot: slot), timeout: ackTimeout)
                }
                return promise.futureResult
            }
        }
        for (batch, future) in zip(perLoop, futures) {
            for (slot, outcome) in try await future.get().enumerated() { outcomes[batch.items[slot].index] = outcome }
        }
        return outcomes
    }

    /// Delivers to a device by registration id (looked up in the store).
    public func deliver(
        _ message: GatewayMessage,
        toRegistrationID registrationID: String,
        ackTimeout: Duration = .seconds(10)
    ) async throws -> DeliveryOutcome {
        guard let device = try await context.store.gatewayDevice(registrationID: registrationID) else { return .notConnected }
        return try await deliver(message, to: device, ackTimeout: ackTimeout)
    }
}
