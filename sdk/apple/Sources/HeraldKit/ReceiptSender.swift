import Logging
import NIOConcurrencyHelpers

/// Sends the queued receipts to Herald: a random while after they were made (up to
/// `spread`, so a push to millions doesn't bring millions of receipts back in one second),
/// at once when told a connection came up (``nudge()``), and again after a failure, later
/// each time. Receipts leave the queue only once Herald took them (``ReceiptQueue``).
public struct ReceiptSender: Sendable {
    public let queue: ReceiptQueue
    let send: @Sendable ([Receipt]) async throws -> Void
    let spread: Duration
    let backoff: Backoff
    let logger: Logger
    private let nudged = NIOLockedValueBox(false)

    /// - Parameter send: sends one batch (``HeraldAPIClient/sendReceipts(_:credentials:)``).
    public init(
        queue: ReceiptQueue,
        spread: Duration = .seconds(30),
        backoff: Backoff = Backoff(),
        logger: Logger,
        send: @escaping @Sendable ([Receipt]) async throws -> Void
    ) {
        self.queue = queue
        self.send = send
        self.spread = spread
        self.backoff = backoff
        self.logger = logger
    }

    /// A sender through Herald's receipts endpoint, as the device.
    public init(queue: ReceiptQueue, api: HeraldAPIClient, credentials: DeviceCredentials, spread: Duration = .seconds(30), logger: Logger) {
        self.init(queue: queue, spread: spread, logger: logger) { _ = try await api.sendReceipts($0, credentials: credentials) }
    }

    /// Send what waits now (a connection came up: the network is there).
    public func nudge() {
        nudged.withLockedValue { $0 = true }
    }

    /// Sends what waits once; throws what the send threw, the rest still queued.
    @discardableResult
    public func flush() async throws -> Int {
        try await queue.flush(send)
    }

    /// Sends receipts until the task is cancelled.
    public func run() async {
        var generator = SystemRandomNumberGenerator()
        var failures = 0
        while !Task.isCancelled {
            // Nothing to send: look again in a while (the extension adds to the file too).
            let waiting = (try? queue.pending().isEmpty == false) ?? false
            let delay =
                failures > 0
                ? backoff.delay(attempt: failures, using: &generator)
                : waiting ? ReceiptQueue.delay(spread: spread, using: &generator) : .seconds(5)
            await sleep(delay)
            guard !Task.isCancelled else { return }
            do {
                let sent = try await flush()
                if sent > 0 { logger.debug("receipts sent", metadata: ["herald.receipts": "\(sent)"]) }
                failures = 0
            } catch {
                failures += 1
                logger.info("cannot send receipts yet", metadata: ["error": "\(error)", "herald.failures": "\(failures)"])
            }
        }
    }

    /// Sleeps `delay`, or less if nudged.
    private func sleep(_ delay: Duration) async {
        let end = ContinuousClock.now + delay
        while ContinuousClock.now < end, !Task.isCancelled {
            if nudged.withLockedValue({ value in
                defer { value = false }
                return value
            }) {
                return
            }
            try? await Task.sleep(for: min(.milliseconds(100), end - ContinuousClock.now))
        }
    }
}
