/// Slows the guessing of device secrets: past a few free failures, a failed CONNECT of a
/// registration id, or from a source address, is answered after a delay that doubles with
/// each further failure, up to a maximum. Failures are forgotten after a quiet period.
///
/// Only failures are delayed: a CONNECT with the right secret is answered at once however
/// many failures its registration id or address has, so an attacker can't lock a device
/// out. A value type without a clock of its own: the caller passes the time.
struct ConnectThrottle<Instant: InstantProtocol> where Instant.Duration == Duration {
    /// What failures are counted against.
    enum Key: Hashable {
        case registrationID(String)
        /// The peer's IP address, without the port.
        case address(String)
    }

    private struct Failures {
        var count: Int
        var last: Instant
    }

    let configuration: GatewayConfiguration.AuthThrottle
    private var failures: [Key: Failures] = [:]

    init(configuration: GatewayConfiguration.AuthThrottle) {
        self.configuration = configuration
    }

    /// Keys being counted (at most ``GatewayConfiguration/AuthThrottle/maximumKeys``).
    var count: Int { failures.count }

    /// Records a failed authentication of `registrationID` from `address`; returns how long
    /// to wait before answering it: the longer of the two keys' delays.
    mutating func failed(registrationID: String, address: String?, at now: Instant) -> Duration {
        var delay = Duration.zero
        // A client id longer than any registration id is not kept: its address still counts.
        if registrationID.utf8.count <= 64 { delay = max(delay, record(.registrationID(registrationID), at: now)) }
        if let address { delay = max(delay, record(.address(address), at: now)) }
        return delay
    }

    /// The delay of the `failures`th failure in a row.
    func delay(afterFailures failures: Int) -> Duration {
        guard failures > configuration.freeFailures else { return .zero }
        let doublings = min(failures - configuration.freeFailures - 1, 32)
        return min(configuration.initialDelay * (Int64(1) << doublings), configuration.maximumDelay)
    }

    private mutating func record(_ key: Key, at now: Instant) -> Duration {
        var entry = failures[key] ?? Failures(count: 0, last: now)
        if entry.last.duration(to: now) >= configuration.forgetAfter { entry.count = 0 }
        entry.count += 1
        entry.last = now
        failures[key] = entry
        if failures.count > configuration.maximumKeys { trim(at: now) }
        return delay(afterFailures: entry.count)
    }

    /// Drops forgotten keys and, if that's not enough, the least recently failed half.
    private mutating func trim(at now: Instant) {
        failures = failures.filter { $0.value.last.duration(to: now) < configuration.forgetAfter }
        guard failures.count > configuration.maximumKeys / 2 else { return }
        let kept = failures.sorted { $0.value.last > $1.value.last }.prefix(configuration.maximumKeys / 2)
        failures = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
    }
}
