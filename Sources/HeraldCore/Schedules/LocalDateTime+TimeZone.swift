import Foundation

extension LocalDateTime {
    /// The instant this wall time names in `zone`.
    ///
    /// Daylight-saving changes make some wall times not exist and others happen twice; a
    /// schedule still fires once:
    /// - a wall time in a gap (02:30 on the night clocks jump from 02:00 to 03:00) is read
    ///   with the offset in force before the jump, so it fires as late as the gap is long
    ///   (03:30);
    /// - a wall time that happens twice (01:30 on the night clocks fall back) is the first
    ///   of the two.
    public func instant(in zone: TimeZone) -> Date {
        let asUTC = Double(secondsAsUTC)
        let before = zone.secondsFromGMT(for: Date(timeIntervalSince1970: asUTC - 86_400))
        let after = zone.secondsFromGMT(for: Date(timeIntervalSince1970: asUTC + 86_400))
        let here = zone.secondsFromGMT(for: Date(timeIntervalSince1970: asUTC))
        var candidates: [Double] = []
        for offset in Set([before, here, after]) {
            let instant = asUTC - Double(offset)
            if zone.secondsFromGMT(for: Date(timeIntervalSince1970: instant)) == offset { candidates.append(instant) }
        }
        return Date(timeIntervalSince1970: candidates.min() ?? asUTC - Double(before))
    }

    /// The wall time `instant` shows in `zone`.
    public init(_ instant: Date, in zone: TimeZone) {
        let seconds = instant.timeIntervalSince1970.rounded(.down)
        self.init(secondsAsUTC: Int64(seconds) + Int64(zone.secondsFromGMT(for: instant)))
    }
}

extension Validation {
    /// An IANA time zone name (`Asia/Shanghai`, `UTC`), as the system's time zone database
    /// knows it; returns the zone's own name for it.
    public static func timeZone(_ value: String, field: String, code: HeraldError.Code = .invalidField) throws(HeraldError) -> TimeZone {
        guard !value.isEmpty, value.utf8.count <= 64, let zone = TimeZone(identifier: value) else {
            throw HeraldError(code, "\(field): not a time zone name the server knows (an IANA name such as Asia/Shanghai or UTC)")
        }
        return zone
    }
}
