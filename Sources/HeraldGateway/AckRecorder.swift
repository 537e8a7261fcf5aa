import HeraldStore
import Logging
import NIOConcurrencyHelpers

/// Writes acknowledgements and what was sent to the store in batches.
///
/// MQTT requires PUBACKs in the order of the PUBLISHes, so one "acknowledged through"
/// position per device is all there is to write; many PUBACKs become one row update, and
/// many devices one statement. Stored messages go out in seq order, so "sent through" is
/// one position too, written in the same row (a replay sets DUP on what it covers). A
/// final flush on shutdown loses nothing acknowledged.
final class AckRecorder: Sendable {
    private struct Pending {
        var acks: [Int64: Int64] = [:]
        var sent: [Int64: Int64] = [:]
        /// The epoch of the connection that recorded each device's positions.
        var epochs: [Int64: Int64] = [:]
        /// Each device's app: whether it records events (``EventApps``).
        var apps: [Int64: Int64] = [:]
        var isEmpty: Bool { acks.isEmpty && sent.isEmpty }
    }

    /// Flushes started and finished, and who waits for one to finish.
    private struct Flushes {
        var started: UInt64 = 0
        var finished: UInt64 = 0
        var waiters: [(through: UInt64, id: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
        var nextWaiter: UInt64 = 0
    }

    private let store: GatewayStore
    private let interval: Duration
    private let logger: Logger
    private let pending = NIOLockedValueBox(Pending())
    private let flushes = NIOLockedValueBox(Flushes())

    /// - Parameter interval: How often to write. Longer folds more of a device's PUBACKs
    ///   into one row update (a 10,000-device stored broadcast measured 20 % faster at
    ///   100 ms than at 20 ms); what a crash loses of it is replayed as DUP on reconnect.
    init(store: GatewayStore, interval: Duration = .milliseconds(100), logger: Logger) {
        self.store = store
        self.interval = interval
        self.logger = logger
    }

    /// `epoch`: the session of the connection that got the acknowledgement; positions a
    /// connection records after a newer one claimed its device are not written.
    func acknowledged(deviceID: Int64, appID: Int64, epoch: Int64, through seq: Int64) {
        pending.withLockedValue {
            $0.acks[deviceID] = max($0.acks[deviceID] ?? 0, seq)
            $0.epochs[deviceID] = max($0.epochs[deviceID] ?? 0, epoch)
            $0.apps[deviceID] = appID
        }
    }

    /// An acknowledgement recorded but not yet written, so a replay doesn't resend it.
    func pendingAcknowledgement(deviceID: Int64) -> Int64? {
        pending.withLockedValue { $0.acks[deviceID] }
    }

    /// A connection sent the device its stored messages through `seq`.
    func sent(deviceID: Int64, appID: Int64, epoch: Int64, through seq: Int64) {
        pending.withLockedValue {
            $0.sent[deviceID] = max($0.sent[deviceID] ?? 0, seq)
            $0.epochs[deviceID] = max($0.epochs[deviceID] ?? 0, epoch)
            $0.apps[deviceID] = appID
        }
    }

    /// A "sent through" recorded but not yet written, so a replay marks those copies DUP.
    func pendingSent(deviceID: Int64) -> Int64? {
        pending.withLockedValue { $0.sent[deviceID] }
    }

    /// Writes batches until cancelled. The owner calls ``flush()`` once more after it has
    /// closed every connection, so the last acknowledgements are written too.
    func flushPeriodically() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            guard !Task.isCancelled else { return }
            await flush()
        }
    }

    /// Returns once everything recorded before the call has been written (or its write
    /// failed, and waits for the next try): the flush under way may have taken only part
    /// of it, so this waits for the one after. A connection's session is released only
    /// then, so the next connection of the device reads what this one sent (the write is
    /// fenced by the session: once another connection claims it, this one's positions
    /// are never written). Returns at once when cancelled.
    func written() async {
        let id = flushes.withLockedValue { flushes -> UInt64 in
            flushes.nextWaiter &+= 1
            return flushes.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = flushes.withLockedValue { flushes -> Bool in
                    guard !Task.isCancelled else { return true }
                    flushes.waiters.append((flushes.started + 1, id, continuation))
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let cancelled = flushes.withLockedValue { flushes -> CheckedContinuation<Void, Never>? in
                guard let index = flushes.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return flushes.waiters.remove(at: index).continuation
            }
            cancelled?.resume()
        }
    }

    /// Writes everything recorded so far.
    func flush() async {
        let number = flushes.withLockedValue { flushes -> UInt64 in
            flushes.started += 1
            return flushes.started
        }
        defer {
            let done = flushes.withLockedValue { flushes -> [CheckedContinuation<Void, Never>] in
                flushes.finished = max(flushes.finished, number)
                let finished = flushes.finished
                let done = flushes.waiters.filter { $0.through <= finished }.map(\.continuation)
                flushes.waiters.removeAll { $0.through <= finished }
                return done
            }
            for continuation in done { continuation.resume() }
        }
        let batch = pending.withLockedValue { pending -> Pending in
            defer { pending = Pending() }
            return pending
        }
        guard !batch.isEmpty else { return }
        // Devices of apps that record events (for all pushes, or those with a callback):
        // their copies sent or acknowledged from the inbox become events.
        let eventApps = await store.eventApps.snapshot()
        let eventDevices = batch.apps.compactMap { device, app in
            eventApps.all.contains(app) || eventApps.callbacks.contains(app) ? device : nil
        }
        do {
            try await store.acknowledge(batch.acks, sent: batch.sent, epochs: batch.epochs, eventDevices: eventDevices)
        } catch {
            if !(error is CancellationError) {
                logger.error("cannot record acknowledgements; retrying", metadata: ["error": "\(String(reflecting: error))"])
            }
            pending.withLockedValue { pending in
                for (device, seq) in batch.acks { pending.acks[device] = max(pending.acks[device] ?? 0, seq) }
                for (device, seq) in batch.sent { pending.sent[device] = max(pending.sent[device] ?? 0, seq) }
                for (device, epoch) in batch.epochs { pending.epochs[device] = max(pending.epochs[device] ?? 0, epoch) }
                for (device, app) in batch.apps { pending.apps[device] = app }
            }
        }
    }
}
