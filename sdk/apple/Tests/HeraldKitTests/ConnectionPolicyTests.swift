import HeraldMQTT
import Testing

@testable import HeraldKit

/// When the SDK holds its connection, one rule per test, with no socket and no clock.
struct ConnectionPolicyTests {
    /// No jitter, so delays are exact: 1 s, 2 s, 4 s...
    static let backoff = Backoff(base: .seconds(1), factor: 2, cap: .seconds(60), jitter: 0)

    /// The policy behind a reference, so a step can be made inside `#expect`.
    final class Driver {
        var policy: ConnectionPolicy

        init(appState: ConnectionPolicy.AppState = .foreground) {
            policy = ConnectionPolicy(appState: appState, backoff: ConnectionPolicyTests.backoff)
        }

        func start() -> ConnectionPolicy.Action { policy.start() }
        func app(_ state: ConnectionPolicy.AppState) -> ConnectionPolicy.Action { policy.appStateChanged(to: state) }
        func network(_ available: Bool) -> ConnectionPolicy.Action { policy.networkChanged(available: available) }
        func connected(_ id: Int) -> ConnectionPolicy.Action { policy.connected(id) }
        func ended(_ id: Int, _ ending: ConnectionPolicy.Ending = .lost) -> ConnectionPolicy.Action { policy.ended(id, ending) }
        func waited(_ id: Int) -> ConnectionPolicy.Action { policy.waited(id) }
    }

    @Test func theForegroundOpensTheConnectionAndTheBackgroundClosesIt() {
        let policy = Driver()
        #expect(policy.start() == .connect(id: 1))
        #expect(policy.connected(1) == .none)
        #expect(policy.app(.background) == .disconnect)
        // The closed connection's end changes nothing.
        #expect(policy.ended(1) == .none)
        #expect(policy.app(.foreground) == .connect(id: 2))
    }

    @Test func anAppStartedInTheBackgroundConnectsOnlyWhenItComesForward() {
        let policy = Driver(appState: .background)
        #expect(policy.start() == .none)
        #expect(policy.app(.background) == .none)
        #expect(policy.app(.foreground) == .connect(id: 1))
    }

    @Test func aLostConnectionIsTriedAgainAfterAGrowingDelayThatAcceptanceResets() {
        let policy = Driver()
        #expect(policy.start() == .connect(id: 1))
        #expect(policy.ended(1) == .wait(.seconds(1), id: 2))
        #expect(policy.waited(2) == .connect(id: 3))
        #expect(policy.ended(3, .refused(.serverUnavailable)) == .wait(.seconds(2), id: 4))
        #expect(policy.waited(4) == .connect(id: 5))
        #expect(policy.connected(5) == .none)
        #expect(policy.ended(5) == .wait(.seconds(1), id: 6))
    }

    @Test func aNetworkChangeEndsTheWaitAtOnce() {
        let policy = Driver()
        _ = policy.start()
        for (connection, wait) in [(1, 2), (3, 4), (5, 6)] {
            _ = policy.ended(connection)
            _ = policy.waited(wait)
        }
        #expect(policy.ended(7) == .wait(.seconds(8), id: 8))
        #expect(policy.network(true) == .connect(id: 9))
        // The wait's end, later, changes nothing.
        #expect(policy.waited(8) == .none)
        #expect(policy.connected(9) == .none)
    }

    @Test func aNetworkPathChangeReplacesTheConnectionAndALostNetworkClosesIt() {
        let policy = Driver()
        _ = policy.start()
        _ = policy.connected(1)
        #expect(policy.network(true) == .reconnect(id: 2))
        #expect(policy.ended(1) == .none)
        _ = policy.connected(2)
        #expect(policy.network(false) == .disconnect)
        #expect(policy.app(.foreground) == .none)
        #expect(policy.network(true) == .connect(id: 3))
    }

    @Test(arguments: [
        (MQTTPacket.ConnAck.ReturnCode.badUsernameOrPassword, HeraldRefusal.badCredentials),
        (.notAuthorized, .notAuthorized),
        (.identifierRejected, .identifierRejected),
        (.unacceptableProtocolVersion, .unacceptableProtocolVersion),
    ])
    func aRefusalThatRetryingCantCureStopsTheClient(code: MQTTPacket.ConnAck.ReturnCode, refusal: HeraldRefusal) {
        let policy = Driver()
        _ = policy.start()
        #expect(policy.ended(1, .refused(code)) == .stop(refusal))
        #expect(policy.policy.stoppedBy == refusal)
        #expect(policy.app(.background) == .none)
        #expect(policy.app(.foreground) == .none)
        #expect(policy.network(true) == .none)
    }

    @Test func aWaitInTheBackgroundIsDropped() {
        let policy = Driver()
        _ = policy.start()
        #expect(policy.ended(1) == .wait(.seconds(1), id: 2))
        #expect(policy.app(.background) == .disconnect)
        #expect(policy.waited(2) == .none)
        #expect(policy.app(.foreground) == .connect(id: 3))
    }
}
