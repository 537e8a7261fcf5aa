import Foundation

/// How many tests hold a database (and the servers around it) at once.
///
/// Swift Testing starts every test at the same time; on a 2-core machine a hundred tests
/// each starting PostgreSQL clients, HTTP servers and gateways starve each other into
/// timeouts. Tests queue here instead; `HERALD_TEST_PARALLEL` overrides the default.
actor TestSlots {
    static let shared = TestSlots(
        limit: ProcessInfo.processInfo.environment["HERALD_TEST_PARALLEL"].flatMap(Int.init).map { max(1, $0) } ?? 6
    )

    private var available: Int
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(limit: Int) {
        available = limit
    }

    func acquire() async {
        if available > 0 {
            available -= 1
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func release() {
        if waiters.isEmpty {
            available += 1
        } else {
            waiters.removeFirst().resume()
        }
    }

    /// Runs `body` holding a slot.
    static func withSlot<Result: Sendable>(_ body: () async throws -> Result) async throws -> Result {
        await shared.acquire()
        do {
            let result = try await body()
            await shared.release()
            return result
        } catch {
            await shared.release()
            throw error
        }
    }
}
