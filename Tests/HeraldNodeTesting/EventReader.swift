import HeraldKit
import NIOConcurrencyHelpers

/// Reads events from an SDK client's stream with a deadline.
public final class EventReader: Sendable {
    private let received = NIOLockedValueBox<[HeraldEvent]>([])
    private let task: Task<Void, Never>

    public init(_ client: HeraldClient) {
        let received = self.received
        task = Task {
            for await event in client.events { received.withLockedValue { $0.append(event) } }
        }
    }

    /// The first event received (and not read yet) that `matching` accepts, waiting for it
    /// up to `timeout`; nil if none came.
    public func next(where matching: @Sendable (HeraldEvent) -> Bool = { _ in true }, timeout: Duration = .seconds(10)) async throws -> HeraldEvent? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let found = received.withLockedValue { events -> HeraldEvent? in
                guard let index = events.firstIndex(where: matching) else { return nil }
                return events.remove(at: index)
            }
            if let found { return found }
            try await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    /// Every event received and not read yet.
    public var all: [HeraldEvent] { received.withLockedValue { $0 } }

    deinit { task.cancel() }
}

extension HeraldEvent {
    public var notification: Notification? {
        if case .notification(let notification) = self { return notification }
        return nil
    }

    public var isNotification: Bool { notification != nil }

    public var message: Message? {
        if case .message(let message) = self { return message }
        return nil
    }

    public var isMessage: Bool { message != nil }
}

/// A test's own failure, with what went wrong.
public struct TestFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
