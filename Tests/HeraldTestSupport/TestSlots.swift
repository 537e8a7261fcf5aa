import Foundation

/// How many tests hold a database (and the servers around it) at once.
///
/// Swift Testing starts every test at the same time; on a 2-core machine a hundred tests
/// each starting PostgreSQL clients, HTTP servers and gateways starve each other into
/// timeouts. Tests queue here instead; `HERALD_TEST_PARALLEL` overrides the default.
/// Four, not six: with six, PostgreSQL took over 5 s to accept connections late in the
/// suite and the heraldctl tests' servers stalled past their 30 s limit in two of three
/// CI runs; with four the whole suite is no slower (43 s here).
actor TestSlots {
    static let shared = TestSlots(
        limit: ProcessInfo.processInfo.environment["HERALD_TEST_PARALLEL"].flatMap(Int.init).map { max(1, $0) } ?? 4
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
