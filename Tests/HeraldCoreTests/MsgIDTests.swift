import HeraldCore
import Testing

/// Message ids in JPush's shape (``MsgIDLayout``): positive decimals that fit a signed
/// 64-bit integer, 19 digits, ordered by time as numbers and as text.
@Suite struct MsgIDTests {
    /// 2025-11-24, in milliseconds since 1970.
    static let now: UInt64 = 1_764_000_000_000

    @Test func idsAre19DigitsWithinTheSigned64BitRangeFromEveryClock() {
        let largest = MsgIDLayout.id(
            time: MsgIDLayout.maximumTime,
            node: MsgIDLayout.nodeCount - 1,
            sequence: MsgIDLayout.sequencesPerMillisecond - 1
        )
        #expect(largest == Int64.max)
        for milliseconds: UInt64 in [0, 1, MsgIDLayout.epochMilliseconds, Self.now, 3_500_000_000_000, UInt64.max] {
            for (node, sequence) in [(0, 0), (1023, 4095), (517, 12)] {
                let id = Identifiers.msgID(milliseconds: milliseconds, node: node, sequence: sequence)
                #expect(id.utf8.count == 19, "\(milliseconds) → \(id)")
                let value = Int64(id)
                #expect(value != nil && value! >= 1_000_000_000_000_000_000, "\(id)")
                #expect(Identifiers.isMsgID(id))
                #expect(value.map(MsgIDLayout.node(of:)) == node)
            }
        }
        #expect(MsgIDLayout.time(milliseconds: Self.now) == Self.now - MsgIDLayout.epochMilliseconds)
    }

    @Test func laterIdsSortAfterEarlierOnesAsNumbersAndAsText() {
        var ids: [String] = []
        for step: UInt64 in [0, 1, 2, 1_000, 60_000, 86_400_000, 10 * 365 * 86_400_000] {
            for (node, sequence) in [(0, 0), (0, 4095), (1023, 0), (1023, 4095)] {
                ids.append(Identifiers.msgID(milliseconds: Self.now + step, node: node, sequence: sequence))
            }
        }
        #expect(ids == ids.sorted())
        #expect(ids.map { Int64($0)! } == ids.map { Int64($0)! }.sorted())
        // The floor of a millisecond is at or below its ids and above every earlier one.
        let floor = Identifiers.msgIDFloor(milliseconds: Self.now + 5)
        #expect(Identifiers.msgID(milliseconds: Self.now + 5, node: 0, sequence: 0) == floor)
        #expect(Identifiers.msgID(milliseconds: Self.now + 4, node: 1023, sequence: 4095) < floor)
        #expect(Identifiers.msgID(milliseconds: Self.now + 5, node: 3, sequence: 7) > floor)
        // A legacy id (24 hex characters, "0" first) sorts below every new one as text.
        let legacy = Identifiers.legacyMsgIDTime(milliseconds: Self.now + 10 * 365 * 86_400_000) + "ffffffffffff"
        #expect(Identifiers.isLegacyMsgID(legacy))
        #expect(legacy < Identifiers.msgIDFloor(milliseconds: 0))
    }

    @Test func theClockOnlyGoesUpAndTakesTheNextMillisecondAfter4096() {
        var clock = MsgIDClock()
        var last: (UInt64, Int) = (0, -1)
        func next(_ milliseconds: UInt64) -> (UInt64, Int) {
            let parts = clock.next(milliseconds: milliseconds)
            #expect(parts.time > last.0 || (parts.time == last.0 && parts.sequence > last.1), "\(parts) after \(last)")
            last = (parts.time, parts.sequence)
            return last
        }
        let start = MsgIDLayout.time(milliseconds: Self.now)
        #expect(next(Self.now) == (start, 0))
        #expect(next(Self.now) == (start, 1))
        // The clock went back a second: the ids stay at the last time.
        #expect(next(Self.now - 1_000) == (start, 2))
        for sequence in 3..<4096 { #expect(next(Self.now) == (start, sequence)) }
        // The 4,097th id of the millisecond takes the next one, ahead of the clock.
        #expect(next(Self.now) == (start + 1, 0))
        #expect(next(Self.now + 1) == (start + 1, 1))
        #expect(next(Self.now + 2) == (start + 2, 0))
        // A floor from the slot's last holder lifts the next id above it.
        clock.raise(to: start + 100)
        #expect(next(Self.now + 3) == (start + 100, 0))
        clock.raise(to: start + 50)
        #expect(next(Self.now + 3) == (start + 100, 1))
    }

    /// Two node slots making ids in the same milliseconds never make the same one.
    @Test func twoNodesMakeDifferentIdsInTheSameMilliseconds() {
        var ids = Set<String>()
        for node in [0, 1] {
            var clock = MsgIDClock()
            for index in 0..<20_000 {
                let (time, sequence) = clock.next(milliseconds: Self.now + UInt64(index / 5_000))
                ids.insert(String(MsgIDLayout.id(time: time, node: node, sequence: sequence)))
            }
        }
        #expect(ids.count == 40_000)
    }

    @Test func theAcceptedShapesAreJPushsAndTheLegacyHex() {
        for id in ["1", "9223372036854775807", "1828256757", "4563345289486925824", "0193a5b2c3d4e5f6a7b8c9d0"] {
            #expect(Identifiers.isMsgID(id), "\(id)")
        }
        for id in [
            "", "0", "0123", "9223372036854775808", "-5", "12a", "1 2", "0193A5B2C3D4E5F6A7B8C9D0", "0193a5b2c3d4e5f6a7b8c9d",
            String(repeating: "9", count: 20),
        ] {
            #expect(!Identifiers.isMsgID(id), "\(id)")
        }
    }
}
