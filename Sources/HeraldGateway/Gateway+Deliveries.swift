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
    public func deliver(_ message: GatewayMessage, to device: DeviceIdentity, ackTimeout: Duration = .seconds(10)) async throws -> DeliveryOutcome {
        try await deliver(message, to: [device], ackTimeout: ackTimeout)[0]
    }

    /// Delivers one message to many devices (a broadcast) and waits for every outcome, in
    /// the order of `devices`.
    ///
    /// A stored message goes into every inbox with one statement (shared with the messages
    /// handed over meanwhile, see ``InboxWriter``); the copies are then handed to each
    /// event loop in one batch, sharing the payload's bytes, in the order of their seqs.
    public func deliver(
        _ message: GatewayMessage,
        to devices: [DeviceIdentity],
        ackTimeout: Duration = .seconds(10)
    ) async throws -> [DeliveryOutcome] {
        guard message.timeToLive > .zero else {
            return try await send(message, to: devices, seqs: [:], ackTimeout: ackTimeout)
        }
        let stored = StoredDelivery(
            inbox: InboxBroadcast(
                deviceIDs: devices.map(\.deviceID),
                msgID: message.msgID,
                payload: Array(buffer: message.payload),
                expiresAt: Date().addingTimeInterval(Double(message.timeToLive.components.seconds))
            ),
            message: message,
            devices: devices,
            ackTimeout: ackTimeout
        )
        return try await inbox.store(stored).outcomes()
    }

    /// Sends a message the caller already stored in each device's inbox (`seqs`: device id
    /// → position; a device without one gets it unstored) to the devices connected here,
    /// and waits for every outcome, in the order of `devices`.
    public func send(
        _ message: GatewayMessage,
        to devices: [DeviceIdentity],
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
        try await context.handOver(deliveries, ackTimeout: ackTimeout).outcomes()
    }

    /// Delivers to a device by registration id (looked up in the store).
    public func deliver(
        _ message: GatewayMessage,
        toRegistrationID registrationID: String,
        ackTimeout: Duration = .seconds(10)
    ) async throws -> DeliveryOutcome {
        guard let device = try await context.store.device(registrationID: registrationID) else { return .notConnected }
        return try await deliver(message, to: device, ackTimeout: ackTimeout)
    }
}
