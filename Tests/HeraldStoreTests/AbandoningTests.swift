import HeraldTestSupport
import NIOConcurrencyHelpers
import Testing

@testable import HeraldStore

/// Work that never ends and ignores cancellation (a statement cut off with its connection)
/// is abandoned when its watch gives up: the job's worker, and the node's shutdown, go on.
struct AbandoningTests {
    @Test func workThatNeverEndsIsAbandonedWhenItsLeaseStopsBeingRenewed() async throws {
        let hung = NIOLockedValueBox<CheckedContinuation<Void, Never>?>(nil)
        let outcome = NIOLockedValueBox<(any Error)?>(nil)
        let finished = NIOLockedValueBox(false)
        let caller = Task {
            do {
                _ = try await abandoning {
                    // Never ends, cancelled or not, until the test lets it go.
                    await withCheckedContinuation { continuation in hung.withLockedValue { $0 = continuation } }
                    return 1
                } when: {
                    try await Task.sleep(for: .milliseconds(100))
                    throw WatchGaveUp()
                }
            } catch {
                outcome.withLockedValue { $0 = error }
            }
            finished.withLockedValue { $0 = true }
        }
        try await waitUntil("the caller to go on without the hung work") { finished.withLockedValue { $0 } }
        #expect(outcome.withLockedValue { $0 } is WatchGaveUp)
        await caller.value
        try await waitUntil("the hung work to have started") { hung.withLockedValue { $0 } != nil }
        hung.withLockedValue { $0 }?.resume()
    }

    @Test func aWatchThatEndsQuietlyLeavesTheWorkToFinish() async throws {
        let result = try await abandoning {
            try await Task.sleep(for: .milliseconds(100))
            return 7
        } when: {
        }
        #expect(result == 7)
    }

    @Test func aDeadlineAbandonsWorkThatOutlastsIt() async throws {
        await #expect(throws: TimedOut.self) {
            try await abandoning(after: .milliseconds(50)) {
                try? await Task.sleep(for: .seconds(30))
                return 0
            }
        }
    }
}

/// What the watch throws when it gives up on the work.
private struct WatchGaveUp: Error {}
