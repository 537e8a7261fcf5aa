import Foundation
import Testing

@testable import HeraldCenter

/// The rule behind one silent recall push per device and recall.
@Suite struct RecentRecallPushesTests {
    private let start = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func theSamePushToADeviceGoesOnceWithinTheWindow() {
        let recent = RecentRecallPushes(window: .seconds(600))
        #expect(recent.claim(deviceID: 1, token: "aa", identifiers: ["a", "b"], recalledAt: start, now: start))
        #expect(!recent.claim(deviceID: 1, token: "aa", identifiers: ["b", "a"], recalledAt: start, now: start.addingTimeInterval(5)))
        // Another device, another token or more identifiers: a different push.
        #expect(recent.claim(deviceID: 2, token: "bb", identifiers: ["a", "b"], recalledAt: start, now: start))
        #expect(recent.claim(deviceID: 1, token: "cc", identifiers: ["a", "b"], recalledAt: start, now: start.addingTimeInterval(6)))
        #expect(recent.claim(deviceID: 1, token: "cc", identifiers: ["a", "b", "c"], recalledAt: start, now: start.addingTimeInterval(7)))
        // Past the window it may go again.
        #expect(recent.claim(deviceID: 2, token: "bb", identifiers: ["a", "b"], recalledAt: start, now: start.addingTimeInterval(601)))
    }

    @Test func aPushAPNsDidNotTakeMayBeSentByTheNextJob() {
        let recent = RecentRecallPushes(window: .seconds(600))
        #expect(recent.claim(deviceID: 1, token: "aa", identifiers: ["a"], recalledAt: start, now: start))
        recent.release(deviceID: 1, token: "aa", identifiers: ["a"], recalledAt: start)
        #expect(recent.claim(deviceID: 1, token: "aa", identifiers: ["a"], recalledAt: start, now: start.addingTimeInterval(1)))
    }

    @Test func aLaterRecallOfTheSameIdentifiersGoesAgain() {
        let recent = RecentRecallPushes(window: .seconds(600))
        #expect(recent.claim(deviceID: 1, token: "aa", identifiers: ["a"], recalledAt: start, now: start))
        // Another job of the same recall: skipped.
        #expect(!recent.claim(deviceID: 1, token: "aa", identifiers: ["a"], recalledAt: start, now: start.addingTimeInterval(1)))
        // The identifier recalled again later (a new notification reused it): sent.
        let later = start.addingTimeInterval(60)
        #expect(recent.claim(deviceID: 1, token: "aa", identifiers: ["a"], recalledAt: later, now: later))
    }
}
