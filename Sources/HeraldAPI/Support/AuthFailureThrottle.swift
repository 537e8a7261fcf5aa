/// Counts failed authentications and says when to stop answering them, so credentials
/// can't be guessed at full speed, without letting an attacker lock a real app out.
///
/// A failure is a wrong secret, counted once however often its address sends it again: a
/// worker that keeps sending a stale secret guesses nothing, and must not spend the budget
/// of the other clients behind its address (a NAT). Three budgets of them, each counted
/// over a window that starts at its first failure:
/// - per key and address: one client guessing one key's secret; checked before the
///   credentials, so a locked pair gets no answer about them until the window ends (the
///   middleware lets credentials that authenticated lately through: see
///   `VerifiedCredentials`);
/// - per address: one client guessing many keys; checked before the credentials too;
/// - per key, from every address: checked only once the credentials were found wrong,
///   so the key's owner, sending the right secret, is never refused.
///
/// A budget is spent by its last failure and refuses from the next attempt on: the
/// failure that spends it is still answered 401.
///
/// A value type with no clock of its own: every call takes the time, so tests move it.
/// Memory is bounded by ``Configuration/capacity`` entries (a key and address remembers
/// a budget's worth of failed credentials); expired windows are dropped first when it is
/// reached.
public struct AuthFailureThrottle<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// The budgets.
    public struct Configuration: Sendable {
        /// Failures one address may have for one key within ``window``. A budget of 0 is
        /// no limit (``perAddress`` behind a proxy that hides the client's address).
        public var perKeyAndAddress: Int
        /// Failures one address may have, whatever the key, within ``window``.
        public var perAddress: Int
        /// Failures one key may have, from every address, within ``window``.
        public var perKey: Int
        /// How long failures count; also how long an exhausted budget refuses.
        public var window: Duration
        /// Entries kept at most.
        public var capacity: Int

        public init(perKeyAndAddress: Int = 10, perAddress: Int = 50, perKey: Int = 200, window: Duration = .seconds(60), capacity: Int = 100_000) {
            self.perKeyAndAddress = perKeyAndAddress
            self.perAddress = perAddress
            self.perKey = perKey
            self.window = window
            self.capacity = capacity
        }
    }

    /// What to do with a request.
    public enum Decision: Equatable, Sendable {
        /// Go on (check the credentials, or answer 401).
        case proceed
        /// Answer 429 with `Retry-After`.
        case refuse(retryAfter: Duration)
    }

    private enum Subject: Hashable {
        case keyAndAddress(String, String)
        case address(String)
        case key(String)
    }

    private struct Count {
        var failures: Int
        var since: Instant
        /// For a key and an address: the credentials that failed (digests), so one sent
        /// again is not counted again. Bounded by ``AuthFailureThrottle/remembered``.
        var guesses: Set<Int> = []
    }

    public let configuration: Configuration
    private var counts: [Subject: Count] = [:]

    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
    }

    /// Before the credentials are checked: refused while the address, or the address
    /// for this key, has no failures left.
    public func admit(key: String, address: String, now: Instant) -> Decision {
        refusal(for: [(.keyAndAddress(key, address), configuration.perKeyAndAddress), (.address(address), configuration.perAddress)], now: now)
    }

    /// Whether `address` has failures counted (expired or not): when it has none,
    /// ``admit(key:address:now:)`` would let it through.
    public func hasFailures(address: String) -> Bool {
        counts[.address(address)] != nil
    }

    /// The credentials were wrong: counts the failure in every budget, unless these same
    /// credentials (`credentials`: a digest of them, e.g. a process-seeded hash of the
    /// header) failed already from this address for this key in its window. Refused
    /// (instead of a plain 401) once a budget is overspent, the key's own budget included:
    /// a key guessed from many addresses refuses wrong secrets from everywhere, never the
    /// right one.
    public mutating func failed(key: String, address: String, credentials: Int, now: Instant) -> Decision {
        let budgets: [(Subject, Int)] = [
            (.keyAndAddress(key, address), configuration.perKeyAndAddress),
            (.address(address), configuration.perAddress),
            (.key(key), configuration.perKey),
        ]
        if counts.count + budgets.count > configuration.capacity { prune(now: now) }
        var pair = current(.keyAndAddress(key, address), now: now)
        guard !pair.guesses.contains(credentials) else { return refusal(for: budgets, now: now, beyond: true) }
        if pair.guesses.count < remembered { pair.guesses.insert(credentials) }
        pair.failures += 1
        counts[.keyAndAddress(key, address)] = pair
        for subject in [Subject.address(address), .key(key)] {
            var count = current(subject, now: now)
            count.failures += 1
            counts[subject] = count
        }
        return refusal(for: budgets, now: now, beyond: true)
    }

    /// How many failed credentials are remembered per key and address: enough to tell a
    /// repeat within the pair's budget (past it, the pair is refused before its check).
    private var remembered: Int { max(configuration.perKeyAndAddress, 16) + 1 }

    /// The subject's count in its current window (a new one once the last has ended).
    private func current(_ subject: Subject, now: Instant) -> Count {
        guard let count = counts[subject], count.since.duration(to: now) < configuration.window else {
            return Count(failures: 0, since: now)
        }
        return count
    }

    /// Counts kept (for tests of the bound).
    public var entryCount: Int { counts.count }

    /// Refused while a budget is spent (`beyond`: overspent, for the failure just counted).
    private func refusal(for budgets: [(Subject, Int)], now: Instant, beyond: Bool = false) -> Decision {
        var longest: Duration?
        for (subject, budget) in budgets {
            guard budget > 0, let count = counts[subject], count.failures >= budget + (beyond ? 1 : 0) else { continue }
            let left = configuration.window - count.since.duration(to: now)
            if left > .zero, left > (longest ?? .zero) { longest = left }
        }
        return longest.map { .refuse(retryAfter: $0) } ?? .proceed
    }

    private mutating func prune(now: Instant) {
        counts = counts.filter { $0.value.since.duration(to: now) < configuration.window }
        // Still full: forget everything rather than grow without bound (an attacker
        // with that many addresses gains one window's worth of guesses).
        if counts.count + 3 > configuration.capacity { counts.removeAll(keepingCapacity: true) }
    }
}
