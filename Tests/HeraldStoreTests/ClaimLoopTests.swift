import HeraldTestSupport
import NIOConcurrencyHelpers
import Testing

@testable import HeraldStore

/// The loop behind webhooks, callbacks and SMS: a claim that never returns (a query cut
/// off by PostgreSQL going away, which ignores cancellation) doesn't stop it.
struct ClaimLoopTests {
    @Test func aClaimThatNeverReturnsIsGivenUpAndTheNextOneWorks() async throws {
        let claims = NIOLockedValueBox(0)
        let done = NIOLockedValueBox<[Int]>([])
        let hung = NIOLockedValueBox<CheckedContinuation<Void, Never>?>(nil)
        let loop = ClaimLoop<Int>(
            width: 2,
            pollInterval: .milliseconds(10),
            claimDeadline: .milliseconds(200),
            claim: { _ in
                let call = claims.withLockedValue { count in
                    count += 1
                    return count
                }
                if call == 1 {
                    // Never ends, cancelled or not, until the test lets it go.
                    await withCheckedContinuation { continuation in hung.withLockedValue { $0 = continuation } }
                    return []
                }
                return done.withLockedValue { $0.isEmpty } ? [call] : []
            },
            work: { item in done.withLockedValue { $0.append(item) } },
            failed: { _ in }
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await loop.run() }
            try await waitUntil("an item claimed after the hung claim is worked on") { !done.withLockedValue { $0 }.isEmpty }
            group.cancelAll()
        }
        #expect(done.withLockedValue { $0 }.count == 1)
        hung.withLockedValue { $0 }?.resume()
    }

    /// What a claim the loop gave up on took, when that claim ends after all, is never
    /// handed on: the webhooks it leased are claimed again at once (they are not marked as
    /// being sent by a worker that doesn't exist), instead of waiting out their lease.
    @Test func whatAnAbandonedClaimTookIsNotTaken() async throws {
        let claims = NIOLockedValueBox(0)
        let taken = NIOLockedValueBox<[Int]>([])
        let hung = NIOLockedValueBox<CheckedContinuation<Void, Never>?>(nil)
        let loop = ClaimLoop<Int>(
            width: 4,
            pollInterval: .milliseconds(10),
            claimDeadline: .milliseconds(200),
            claim: { _ in
                let call = claims.withLockedValue { count in
                    count += 1
                    return count
                }
                if call == 1 {
                    await withCheckedContinuation { continuation in hung.withLockedValue { $0 = continuation } }
                    return [99]
                }
                return call == 2 ? [2] : []
            },
            taken: { item in taken.withLockedValue { $0.append(item) } },
            work: { _ in },
            failed: { _ in }
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await loop.run() }
            try await waitUntil("the claim after the abandoned one") { taken.withLockedValue { $0 } == [2] }
            hung.withLockedValue { $0 }?.resume()
            try await Task.sleep(for: .milliseconds(200))
            group.cancelAll()
        }
        #expect(taken.withLockedValue { $0 } == [2])
    }
}
