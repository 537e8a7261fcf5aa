import Testing

@testable import HeraldGateway

/// The brake on guessing device secrets, driven by the time the test passes in.
@Suite struct ConnectThrottleTests {
    private typealias Throttle = ConnectThrottle<ContinuousClock.Instant>
    private let start = ContinuousClock.now

    private static let configuration = GatewayConfiguration.AuthThrottle(
        freeFailures: 3,
        initialDelay: .seconds(1),
        maximumDelay: .seconds(10),
        forgetAfter: .seconds(600),
        maximumKeys: 100
    )

    @Test func failuresPastTheFreeOnesAreDelayedLongerEachTimeUpToTheMaximum() {
        var throttle = Throttle(configuration: Self.configuration)
        let delays = (0..<9).map { _ in throttle.failed(registrationID: "rid", address: "10.0.0.1", at: start) }
        #expect(delays == [.zero, .zero, .zero, .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(10), .seconds(10)])
    }

    @Test func guessesAtManyIDsFromOneAddressAreBrakedByTheAddress() {
        var throttle = Throttle(configuration: Self.configuration)
        let delays = (0..<5).map { throttle.failed(registrationID: "rid\($0)", address: "10.0.0.1", at: start) }
        #expect(delays == [.zero, .zero, .zero, .seconds(1), .seconds(2)])
    }

    @Test func guessesAtOneIDFromManyAddressesAreBrakedByTheID() {
        var throttle = Throttle(configuration: Self.configuration)
        let delays = (0..<5).map { throttle.failed(registrationID: "rid", address: "10.0.0.\($0)", at: start) }
        #expect(delays == [.zero, .zero, .zero, .seconds(1), .seconds(2)])
    }

    @Test func otherIDsAndAddressesAreNotDelayed() {
        var throttle = Throttle(configuration: Self.configuration)
        for _ in 0..<6 { _ = throttle.failed(registrationID: "rid", address: "10.0.0.1", at: start) }
        #expect(throttle.failed(registrationID: "other", address: "10.0.0.2", at: start) == .zero)
    }

    @Test func failuresAreForgottenAfterAQuietPeriod() {
        var throttle = Throttle(configuration: Self.configuration)
        for _ in 0..<6 { _ = throttle.failed(registrationID: "rid", address: "10.0.0.1", at: start) }
        #expect(throttle.failed(registrationID: "rid", address: "10.0.0.1", at: start + .seconds(599)) == .seconds(8))
        #expect(throttle.failed(registrationID: "rid", address: "10.0.0.1", at: start + .seconds(1199)) == .zero)
    }

    @Test func theKeysKeptAreBoundedAndTheMostRecentStay() {
        var throttle = Throttle(configuration: Self.configuration)
        for _ in 0..<6 { _ = throttle.failed(registrationID: "target", address: nil, at: start) }
        for index in 0..<1_000 {
            _ = throttle.failed(registrationID: "target", address: nil, at: start + .milliseconds(index))
            _ = throttle.failed(registrationID: "noise\(index)", address: nil, at: start + .milliseconds(index))
            #expect(throttle.count <= 100)
        }
        #expect(throttle.failed(registrationID: "target", address: nil, at: start + .seconds(2)) == .seconds(10))
    }

    @Test func aClientIDLongerThanAnyRegistrationIDIsNotKeptButItsAddressCounts() {
        var throttle = Throttle(configuration: Self.configuration)
        let long = String(repeating: "x", count: 1000)
        let delays = (0..<4).map { _ in throttle.failed(registrationID: long, address: "10.0.0.1", at: start) }
        #expect(delays.last == .seconds(1))
        #expect(throttle.count == 1)
    }
}
