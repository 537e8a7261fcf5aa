import HeraldAPI
import Testing

/// The throttle's budgets on their own, with the time moved by the test.
struct AuthFailureThrottleTests {
    typealias Throttle = AuthFailureThrottle<ContinuousClock.Instant>
    let start = ContinuousClock.now

    /// Distinct wrong credentials, as a guesser sends them.
    static let guesses = (0..<2000).map { "guess \($0)".hashValue }

    func throttle(perKeyAndAddress: Int = 3, perAddress: Int = 10, perKey: Int = 20) -> Throttle {
        Throttle(configuration: .init(perKeyAndAddress: perKeyAndAddress, perAddress: perAddress, perKey: perKey, window: .seconds(60)))
    }

    @Test func anAddressIsRefusedForAKeyOnceItsFailuresAreSpentAndUntilTheWindowEnds() {
        var throttle = throttle()
        #expect(throttle.failed(key: "k", address: "a", credentials: Self.guesses[0], now: start) == .proceed)
        #expect(throttle.failed(key: "k", address: "a", credentials: Self.guesses[1], now: start + .seconds(1)) == .proceed)
        // The failure that spends the budget is still answered; the next attempt is refused.
        #expect(throttle.failed(key: "k", address: "a", credentials: Self.guesses[2], now: start + .seconds(2)) == .proceed)
        #expect(throttle.admit(key: "k", address: "a", now: start + .seconds(2)) == .refuse(retryAfter: .seconds(58)))
        #expect(throttle.admit(key: "k", address: "a", now: start + .seconds(30)) == .refuse(retryAfter: .seconds(30)))
        #expect(throttle.admit(key: "k", address: "a", now: start + .seconds(60)) == .proceed)
    }

    @Test func anotherAddressIsNotRefusedForTheSameKey() {
        var throttle = throttle()
        for second in 0..<3 { _ = throttle.failed(key: "k", address: "a", credentials: Self.guesses[second], now: start + .seconds(second)) }
        #expect(throttle.admit(key: "k", address: "a", now: start + .seconds(3)) != .proceed)
        #expect(throttle.admit(key: "k", address: "b", now: start + .seconds(3)) == .proceed)
        #expect(throttle.admit(key: "other", address: "a", now: start + .seconds(3)) == .proceed)
    }

    @Test func anAddressGuessingManyKeysIsRefusedForEveryKey() {
        var throttle = throttle()
        for index in 0..<10 { _ = throttle.failed(key: "k\(index)", address: "a", credentials: Self.guesses[index], now: start) }
        #expect(throttle.admit(key: "fresh", address: "a", now: start + .seconds(1)) == .refuse(retryAfter: .seconds(59)))
        #expect(throttle.admit(key: "fresh", address: "b", now: start + .seconds(1)) == .proceed)
    }

    @Test func aKeyGuessedFromManyAddressesRefusesOnlyWrongCredentials() {
        var throttle = throttle()
        for index in 0..<20 {
            #expect(throttle.failed(key: "k", address: "a\(index)", credentials: Self.guesses[index], now: start) == .proceed)
        }
        #expect(throttle.failed(key: "k", address: "a20", credentials: Self.guesses[20], now: start) == .refuse(retryAfter: .seconds(60)))
        // Checked before the credentials: a new address (the key's owner) is let through.
        #expect(throttle.admit(key: "k", address: "owner", now: start + .seconds(1)) == .proceed)
        // And a wrong secret from it is refused, not answered 401.
        #expect(throttle.failed(key: "k", address: "owner", credentials: Self.guesses[21], now: start + .seconds(1)) != .proceed)
    }

    @Test func failuresOlderThanTheWindowNoLongerCount() {
        var throttle = throttle()
        for second in 0..<3 { _ = throttle.failed(key: "k", address: "a", credentials: Self.guesses[second], now: start + .seconds(second)) }
        #expect(throttle.failed(key: "k", address: "a", credentials: Self.guesses[3], now: start + .seconds(61)) == .proceed)
        #expect(throttle.failed(key: "k", address: "a", credentials: Self.guesses[4], now: start + .seconds(62)) == .proceed)
        #expect(throttle.admit(key: "k", address: "a", now: start + .seconds(62)) == .proceed)
    }

    @Test func aBudgetOfZeroIsNoLimit() {
        var throttle = throttle(perKeyAndAddress: 0, perAddress: 0, perKey: 0)
        for second in 0..<100 {
            #expect(throttle.failed(key: "k", address: "a", credentials: Self.guesses[second], now: start + .milliseconds(second)) == .proceed)
        }
        #expect(throttle.admit(key: "k", address: "a", now: start + .seconds(1)) == .proceed)
    }

    @Test func itKeepsAtMostItsCapacityOfEntries() {
        var throttle = Throttle(configuration: .init(perKeyAndAddress: 2, perAddress: 2, perKey: 2, window: .seconds(60), capacity: 30))
        for index in 0..<1000 { _ = throttle.failed(key: "k\(index)", address: "a\(index)", credentials: Self.guesses[index], now: start) }
        #expect(throttle.entryCount <= 30)
    }
}

extension AuthFailureThrottleTests {
    @Test func anAddressThatWasRefusedHasFailures() {
        var throttle = throttle()
        #expect(!throttle.hasFailures(address: "a"))
        for second in 0..<3 { _ = throttle.failed(key: "k", address: "a", credentials: Self.guesses[second], now: start + .seconds(second)) }
        #expect(throttle.hasFailures(address: "a"))
        #expect(!throttle.hasFailures(address: "b"))
    }
}

extension AuthFailureThrottleTests {
    /// A client that keeps sending one stale secret guesses nothing: it spends one failure,
    /// and its address (shared by other clients) is never refused for it.
    @Test func theSameWrongCredentialsCountOnce() {
        var throttle = throttle()
        let stale = "stale".hashValue
        for second in 0..<100 {
            #expect(throttle.failed(key: "k", address: "a", credentials: stale, now: start + .milliseconds(second)) == .proceed)
        }
        #expect(throttle.admit(key: "k", address: "a", now: start + .seconds(1)) == .proceed)
        // Two more distinct guesses spend the budget of three.
        _ = throttle.failed(key: "k", address: "a", credentials: Self.guesses[0], now: start + .seconds(1))
        #expect(throttle.admit(key: "k", address: "a", now: start + .seconds(1)) == .proceed)
        _ = throttle.failed(key: "k", address: "a", credentials: Self.guesses[1], now: start + .seconds(1))
        #expect(throttle.admit(key: "k", address: "a", now: start + .seconds(1)) == .refuse(retryAfter: .seconds(59)))
    }

    /// The budget's last failure is answered 401; the attempt after it is the first 429.
    @Test func theFailureThatSpendsTheBudgetIsNotRefused() {
        var throttle = throttle(perKeyAndAddress: 10, perAddress: 50, perKey: 200)
        for index in 0..<10 {
            #expect(throttle.admit(key: "k", address: "a", now: start) == .proceed, "attempt \(index + 1)")
            #expect(throttle.failed(key: "k", address: "a", credentials: Self.guesses[index], now: start) == .proceed, "failure \(index + 1)")
        }
        #expect(throttle.admit(key: "k", address: "a", now: start) == .refuse(retryAfter: .seconds(60)))
    }
}
