import Foundation
import HeraldCore
import Logging
import NIOConcurrencyHelpers
import PostgresNIO

/// Makes this process's message ids (``MsgIDLayout``): decimal, time-ordered, unique among
/// the processes that share the database.
///
/// Their node slot is leased in `msg_id_slots` (migration 0014) on the first id and
/// renewed while ids are made: one round trip at the first id and one every
/// ``renewAfter`` of making ids, none per id. No id is made with a lease older than
/// ``validFor`` by this process's clock, which is less than ``lease``: a process stops
/// using its slot before the database can give the slot to another, and after a longer
/// pause (a frozen VM) it leases a slot again before its next id. A new holder of a slot
/// starts its ids above the time its last holder may have reached (`time_bound`), so two
/// holders never make the same id, even with clocks that disagree.
///
/// The ids of one process only go up, whatever its clock does (``MsgIDClock``): 4,096 per
/// millisecond; more take the next millisecond.
public final class MessageIDs: Sendable {
    /// How long a lease lasts in the database.
    static let lease: Duration = .seconds(60)
    /// How old a lease (from when it was asked for) is renewed.
    static let renewAfter: Duration = .seconds(20)
    /// How old a lease may be when an id is made with it.
    static let validFor: Duration = .seconds(50)

    private struct Lease {
        let slot: Int
        let askedAt: ContinuousClock.Instant
    }

    private struct State {
        var clock = MsgIDClock()
        var lease: Lease?
        var renewing = false
    }

    private let client: PostgresClient
    private let logger: Logger
    /// This process's name on the slot it holds.
    private let holder = RandomToken.hex(byteCount: 12)
    private let state = NIOLockedValueBox(State())
    private let leasing = SingleFlight()

    init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// The next id. Throws only when no slot could be leased (the database is unreachable,
    /// or 1,024 processes hold one).
    public func next() async throws -> String {
        while true {
            let now = ContinuousClock.now
            let (id, renewal): (String?, Lease?) = state.withLockedValue { state in
                guard let lease = state.lease, now < lease.askedAt + Self.validFor else { return (nil, nil) }
                let (time, sequence) = state.clock.next(milliseconds: Self.wallClock())
                let id = String(MsgIDLayout.id(time: time, node: lease.slot, sequence: sequence))
                guard now >= lease.askedAt + Self.renewAfter, !state.renewing else { return (id, nil) }
                state.renewing = true
                return (id, lease)
            }
            if let renewal { await renew(renewal) }
            if let id { return id }
            try await leasing.run { try await self.leaseSlot() }
        }
    }

    /// The slot this process holds, if its lease is current (for tests and logs).
    public var slot: Int? {
        let now = ContinuousClock.now
        return state.withLockedValue { state in
            state.lease.flatMap { now < $0.askedAt + Self.validFor ? $0.slot : nil }
        }
    }

    /// Leases a free slot, or one whose lease ran out, preferring one never used; a slot two
    /// processes reach for at once goes to one of them and the other tries again.
    private func leaseSlot() async throws {
        if slot != nil { return }
        for _ in 0..<16 {
            let askedAt = ContinuousClock.now
            let floor = state.withLockedValue { max($0.clock.time, MsgIDLayout.time(milliseconds: Self.wallClock())) }
            let rows = try await client.query(
                """
                WITH candidate AS (
                    SELECT g.slot, COALESCE(s.time_bound, 0) AS time_bound
                    FROM generate_series(0, \(Int32(MsgIDLayout.nodeCount - 1))) AS g(slot)
                    LEFT JOIN msg_id_slots s ON s.slot = g.slot
                    WHERE s.slot IS NULL OR s.leased_until < now()
                    ORDER BY s.leased_until NULLS FIRST, random()
                    LIMIT 1
                ), taken AS (
                    INSERT INTO msg_id_slots AS s (slot, holder, leased_until, time_bound)
                    SELECT slot, \(holder), now() + make_interval(secs => \(Self.lease.timeInterval)),
                           GREATEST(time_bound, \(Int64(floor))) + \(Self.leaseMilliseconds)
                    FROM candidate
                    ON CONFLICT (slot) DO UPDATE
                    SET holder = excluded.holder, leased_until = excluded.leased_until, time_bound = excluded.time_bound
                    WHERE s.leased_until < now()
                    RETURNING s.slot
                )
                SELECT taken.slot, candidate.time_bound FROM taken JOIN candidate ON candidate.slot = taken.slot
                """,
                logger: logger
            )
            for try await (slot, previousBound) in rows.decode((Int32, Int64).self) {
                state.withLockedValue { state in
                    state.clock.raise(to: UInt64(max(0, previousBound)))
                    state.lease = Lease(slot: Int(slot), askedAt: askedAt)
                }
                logger.debug("leased a message id slot", metadata: ["msg_id.slot": "\(slot)"])
                return
            }
        }
        throw HeraldError(.unavailable, "no message id slot is free; retry later")
    }

    /// Extends the lease. Failing to is not an error while the lease lasts: the next id
    /// after ``renewAfter`` tries again, and one after ``validFor`` leases a slot anew.
    private func renew(_ lease: Lease) async {
        let askedAt = ContinuousClock.now
        let bound = state.withLockedValue { max($0.clock.time, MsgIDLayout.time(milliseconds: Self.wallClock())) }
        do {
            let rows = try await client.query(
                """
                UPDATE msg_id_slots SET leased_until = now() + make_interval(secs => \(Self.lease.timeInterval)),
                    time_bound = GREATEST(time_bound, \(Int64(bound) + Self.leaseMilliseconds))
                WHERE slot = \(Int32(lease.slot)) AND holder = \(holder)
                RETURNING slot
                """,
                logger: logger
            )
            let renewed = try await rows.collect().count == 1
            state.withLockedValue { state in
                state.renewing = false
                guard state.lease?.slot == lease.slot else { return }
                // Not renewed: the lease ran out and another process holds the slot now.
                state.lease = renewed ? Lease(slot: lease.slot, askedAt: askedAt) : nil
            }
        } catch {
            state.withLockedValue { $0.renewing = false }
            logger.warning("cannot renew the message id slot", metadata: ["msg_id.slot": "\(lease.slot)", "error": "\(String(reflecting: error))"])
        }
    }

    private static let leaseMilliseconds = Int64(lease.components.seconds * 1000)

    private static func wallClock() -> UInt64 {
        UInt64(max(0, Date().timeIntervalSince1970 * 1000))
    }
}

/// Runs one `body` at a time: a caller that finds one running waits for it instead of
/// starting another.
private actor SingleFlight {
    private var running: Task<Void, any Error>?

    func run(_ body: @escaping @Sendable () async throws -> Void) async throws {
        if let running { return try await running.value }
        let task = Task { try await body() }
        running = task
        defer { running = nil }
        try await task.value
    }
}
