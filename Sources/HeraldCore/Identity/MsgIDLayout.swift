/// The bits of a message id, a positive signed 64-bit integer that JPush's clients read as
/// a `long` and that sorts by the time it was made:
///
/// ```
/// 0 | 41 bits: milliseconds since 2015-01-01 | 10 bits: node slot | 12 bits: sequence
/// ```
///
/// The node slot (0–1023) is leased by each process from PostgreSQL once, on its first id,
/// so that the processes of a cluster make different ids without asking the database for
/// each one. The sequence numbers the ids a process makes in one millisecond: 4,096 per
/// millisecond per node. Past that the process takes the next millisecond, running ahead
/// of its clock until its rate falls (``MsgIDClock``).
///
/// Ids are at least 10^18, so every id has 19 digits: the time part starts at mid-2022
/// (7.6 years after the epoch), and 41 bits last until 2084.
public enum MsgIDLayout {
    /// 2015-01-01T00:00:00Z, in milliseconds since 1970.
    public static let epochMilliseconds: UInt64 = 1_420_070_400_000
    public static let nodeBits = 10
    public static let sequenceBits = 12
    /// How many processes can make ids at the same time.
    public static let nodeCount = 1 << nodeBits
    /// How many ids one process makes in one millisecond before it takes the next one.
    public static let sequencesPerMillisecond = 1 << sequenceBits
    /// The smallest time part: the one that makes 10^18, the smallest 19-digit id.
    public static let minimumTime: UInt64 = (1_000_000_000_000_000_000 + (1 << 22) - 1) >> 22
    /// The largest time part that fits 63 bits.
    public static let maximumTime: UInt64 = (1 << 41) - 1

    /// The time part for `milliseconds` since 1970: milliseconds since the epoch, never
    /// below ``minimumTime`` (a clock set before 2022 still makes ids of 19 digits).
    public static func time(milliseconds: UInt64) -> UInt64 {
        let since = milliseconds > epochMilliseconds ? milliseconds - epochMilliseconds : 0
        return min(max(since, minimumTime), maximumTime)
    }

    /// The id with these parts.
    public static func id(time: UInt64, node: Int, sequence: Int) -> Int64 {
        precondition((0..<nodeCount).contains(node) && (0..<sequencesPerMillisecond).contains(sequence))
        precondition(time <= maximumTime, "message ids run out in 2084")
        return Int64(time << 22 | UInt64(node) << 12 | UInt64(sequence))
    }

    /// The time part of `id`.
    public static func time(of id: Int64) -> UInt64 { UInt64(id) >> 22 }
    /// The node slot of `id`.
    public static func node(of id: Int64) -> Int { Int(id >> 12) & (nodeCount - 1) }
}

/// The time and sequence parts of one process's ids, in order: each is above the one
/// before, whatever its clock does. A value: the caller keeps it under its lock.
public struct MsgIDClock: Sendable, Hashable {
    /// The time part of the last id, or the floor below which no id may be made.
    public private(set) var time: UInt64
    /// The sequence of the last id at ``time``; -1 when none was made at it yet.
    public private(set) var sequence: Int

    /// A clock whose first id is at `floor` or later.
    public init(floor: UInt64 = 0) {
        time = floor
        sequence = -1
    }

    /// Raises the floor: the next id's time part is at least `floor`.
    public mutating func raise(to floor: UInt64) {
        if floor > time {
            time = floor
            sequence = -1
        }
    }

    /// The parts of the next id, `milliseconds` since 1970 being now. A clock that went
    /// back keeps the time of the last id; 4,096 ids in one millisecond move on to the
    /// next.
    public mutating func next(milliseconds: UInt64) -> (time: UInt64, sequence: Int) {
        let now = MsgIDLayout.time(milliseconds: milliseconds)
        if now > time {
            time = now
            sequence = 0
        } else if sequence + 1 < MsgIDLayout.sequencesPerMillisecond {
            sequence += 1
        } else {
            time += 1
            sequence = 0
        }
        return (time, sequence)
    }
}
