import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import PostgresNIO
import Testing

/// A node's message ids (``MessageIDs``): unique among many tasks and among the processes
/// that share a database, each process on a slot it leased once.
@Suite struct MessageIDsTests {
    /// `tasks` tasks making `count` ids each from `stores` (taken in turn), at once: each
    /// task's ids with the index of its store.
    private func ids(_ stores: [APIStore], tasks: Int, count: Int) async throws -> [(store: Int, ids: [String])] {
        try await withThrowingTaskGroup(of: (Int, [String]).self) { group in
            for task in 0..<tasks {
                let index = task % stores.count
                let store = stores[index]
                group.addTask {
                    var made: [String] = []
                    for _ in 0..<count { made.append(try await store.newMsgID()) }
                    return (index, made)
                }
            }
            var all: [(store: Int, ids: [String])] = []
            for try await made in group { all.append(made) }
            return all
        }
    }

    private func slot(_ id: String) -> Int? { Int64(id).map(MsgIDLayout.node(of:)) }

    @Test func manyTasksGetDistinctIncreasingIdsOnOneLeasedSlot() async throws {
        try await TestDatabase.withStore { store in
            let made = try await ids([store.api], tasks: 16, count: 500).map(\.ids)
            let all = made.flatMap { $0 }
            #expect(Set(all).count == 16 * 500)
            #expect(all.allSatisfy { $0.utf8.count == 19 && Int64($0).map { $0 > 0 } == true })
            for ids in made { #expect(ids == ids.sorted(), "one task's ids go up") }
            let slots = Set(all.map(slot))
            #expect(slots.count == 1)
            // The slot is leased in the database, once, to this process.
            let rows = try await store.sql.query("SELECT slot, leased_until > now() FROM msg_id_slots")
            var leases: [(Int32, Bool)] = []
            for try await lease in rows.decode((Int32, Bool).self) { leases.append(lease) }
            #expect(leases.count == 1)
            #expect(leases.first.map { Int($0.0) } == slots.first ?? nil)
            #expect(leases.first?.1 == true)
        }
    }

    /// Two processes' stores (each with its own pools and slot) on one database.
    @Test func twoProcessesOnOneDatabaseHoldDifferentSlotsAndNeverMakeTheSameId() async throws {
        try await TestDatabase.withDatabase { url in
            let (first, firstPools) = TestDatabase.makeStores(url)
            let (second, secondPools) = TestDatabase.makeStores(url)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for pool in firstPools + secondPools { group.addTask { try await pool.run() } }
                defer { group.cancelAll() }
                // Both lease their slots at the same moment, and make ids in the same milliseconds.
                let made = try await ids([first.api, second.api], tasks: 16, count: 500)
                let all = made.flatMap(\.ids)
                #expect(all.count == 16 * 500)
                #expect(Set(all).count == all.count)
                let firstSlot = try #require(first.msgIDs.slot)
                let secondSlot = try #require(second.msgIDs.slot)
                #expect(firstSlot != secondSlot)
                for (store, ids) in made {
                    #expect(Set(ids.map(slot)) == [store == 0 ? firstSlot : secondSlot])
                }
            }
        }
    }

    /// A slot whose lease ran out goes to the next process that needs one, whose ids start
    /// above the time its last holder may have reached, whatever the two clocks say.
    @Test func aSlotWhoseLeaseRanOutIsTakenAboveItsTimeBound() async throws {
        try await TestDatabase.withDatabase { url in
            let (first, firstPools) = TestDatabase.makeStores(url)
            let (second, secondPools) = TestDatabase.makeStores(url)
            try await TestDatabase.withClient(url) { sql in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for pool in firstPools + secondPools { group.addTask { try await pool.run() } }
                    defer { group.cancelAll() }
                    let before = try await first.api.newMsgID()
                    let held = try #require(first.msgIDs.slot)
                    // Every other slot is held; the first process's lease ran out, and its
                    // clock ran an hour ahead.
                    let bound = Int64(MsgIDLayout.time(of: Int64(before)!)) + 3_600_000
                    try await sql.query(
                        """
                        INSERT INTO msg_id_slots (slot, holder, leased_until, time_bound)
                        SELECT g, 'elsewhere', now() + interval '1 hour', 0 FROM generate_series(0, 1023) g WHERE g <> \(Int32(held))
                        """
                    )
                    try await sql.query(
                        "UPDATE msg_id_slots SET leased_until = now() - interval '1 second', time_bound = \(bound) WHERE slot = \(Int32(held))"
                    )
                    let taken = try await second.api.newMsgID()
                    #expect(second.msgIDs.slot == held)
                    #expect(MsgIDLayout.time(of: Int64(taken)!) >= UInt64(bound))
                    #expect(taken > before)
                    // With every slot held, a third process cannot make ids: an error, not a duplicate.
                    let (third, thirdPools) = TestDatabase.makeStores(url)
                    for pool in thirdPools { group.addTask { try await pool.run() } }
                    let error = await #expect(throws: HeraldError.self) { try await third.api.newMsgID() }
                    #expect(error?.code == .unavailable)
                }
            }
        }
    }

    /// Past 20 s a lease is renewed by the next id (one round trip, not one per id); a
    /// process that finds its slot taken (its lease ran out while it was paused) leases
    /// another before its next id. Waits 21 s.
    @Test func leasesAreRenewedAndASlotFoundTakenIsLeftForAnother() async throws {
        try await TestDatabase.withDatabase { url in
            let (renewing, renewingPools) = TestDatabase.makeStores(url)
            let (robbed, robbedPools) = TestDatabase.makeStores(url)
            try await TestDatabase.withClient(url) { sql in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for pool in renewingPools + robbedPools { group.addTask { try await pool.run() } }
                    defer { group.cancelAll() }
                    func leasedUntil(_ slot: Int) async throws -> Date? {
                        let rows = try await sql.query("SELECT leased_until FROM msg_id_slots WHERE slot = \(Int32(slot))")
                        for try await until in rows.decode(Date.self) { return until }
                        return nil
                    }
                    _ = try await renewing.api.newMsgID()
                    let first = try await robbed.api.newMsgID()
                    let kept = try #require(renewing.msgIDs.slot)
                    let lost = try #require(robbed.msgIDs.slot)
                    let leased = try #require(try await leasedUntil(kept))
                    try await sql.query(
                        "UPDATE msg_id_slots SET holder = 'another', leased_until = now() + interval '1 hour' WHERE slot = \(Int32(lost))"
                    )

                    try await Task.sleep(for: .seconds(21))
                    _ = try await renewing.api.newMsgID()
                    #expect(try #require(try await leasedUntil(kept)) > leased.addingTimeInterval(15))
                    #expect(renewing.msgIDs.slot == kept)
                    // The id that found the slot taken was made while the lease held; the next
                    // one is on a new slot.
                    let during = try await robbed.api.newMsgID()
                    let after = try await robbed.api.newMsgID()
                    let slot = try #require(robbed.msgIDs.slot)
                    #expect(slot != lost && slot != kept)
                    #expect(Int64(after).map(MsgIDLayout.node(of:)) == slot)
                    #expect(Set([first, during, after]).count == 3)
                    #expect(first < during && during < after)
                }
            }
        }
    }
}
