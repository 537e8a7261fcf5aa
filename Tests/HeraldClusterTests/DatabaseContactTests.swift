import Testing

@testable import HeraldNode

/// When a node may declare others dead, and when it asks its peers whether it is the one
/// cut off from the database: one row per rule, on a dead-after of 10 s.
struct DatabaseContactTests {
    typealias Instant = ContinuousClock.Instant
    let start = ContinuousClock.now

    /// The heartbeats that went through, at these seconds after `start`.
    func contact(reachedAt seconds: [Int]) -> DatabaseContact {
        var contact = DatabaseContact(deadAfter: .seconds(10))
        for second in seconds { _ = contact.reached(at: start + .seconds(second)) }
        return contact
    }

    @Test(arguments: [
        // (heartbeats that went through, now, may sweep)
        ([Int](), 30, false),  // never reached the database
        ([0], 5, false),  // just joined: the others may not have heartbeated yet
        ([0, 2, 4, 6, 8, 10], 10, true),  // in contact for dead-after
        ([0, 2, 4, 6, 8, 10, 12], 12, true),
        ([0, 30, 32], 32, false),  // back after an outage: the others may be too, any moment now
        ([0, 30, 32, 34, 36, 38, 40], 40, true),  // in contact for dead-after since the outage
        ([0, 4, 8, 12], 12, true),  // gaps of 4 s (< half of dead-after) are still contact
        ([0, 6, 12, 18], 18, false),  // gaps of 6 s are not
    ])
    func mayDeclareOthersDeadOnlyAfterDeadAfterOfContinuousContact(reached: [Int], now: Int, maySweep: Bool) {
        #expect(contact(reachedAt: reached).maySweep(at: start + .seconds(now)) == maySweep)
    }

    @Test(arguments: [
        // (heartbeats that went through, now, asks its peers)
        ([Int](), 30, false),  // never joined: no peers to ask
        ([0], 10, false),  // silent for dead-after exactly: the peers haven't declared it dead
        ([0], 11, true),  // longer: they have, and treat its devices as offline
        ([0, 20], 25, false),  // reached the database again
    ])
    func asksItsPeersOnceSilentForLongerThanDeadAfter(reached: [Int], now: Int, asks: Bool) {
        #expect(contact(reachedAt: reached).shouldAskPeers(at: start + .seconds(now)) == asks)
    }

    @Test func aNodeCutOffAsksOnceAndTakesDevicesAgainWhenBack() {
        var contact = contact(reachedAt: [0])
        contact.peerReachesIt()
        #expect(!contact.shouldAskPeers(at: start + .seconds(20)), "it asked again after letting its devices go")
        let wasCutOff = contact.reached(at: start + .seconds(30))
        #expect(wasCutOff, "back in contact, it did not say it was cut off until now")
        #expect(!contact.cutOff)
        let again = contact.reached(at: start + .seconds(32))
        #expect(!again)
    }
}
