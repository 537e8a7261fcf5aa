import NIOCore
import Testing

@testable import HeraldGateway

/// A connection's time rules, driven by the instants the test passes in: no socket, no sleep.
@Suite struct ConnectionTimersTests {
    private static let configuration = GatewayConfiguration(
        connectTimeout: .seconds(5),
        minimumKeepAlive: .seconds(10),
        maximumKeepAlive: .seconds(1800),
        authTimeout: .seconds(3),
        slowConsumerTimeout: .seconds(30)
    )
    private let opened = NIODeadline.uptimeNanoseconds(1_000_000_000_000)
    /// The least time past a limit.
    private let moment = TimeAmount.nanoseconds(1)

    @Test func aSilentSessionExpiresOnlyOnceOneAndAHalfTimesItsKeepAliveHasPassed() {
        let timers = session(keepAlive: 20)
        #expect(expired(timers, at: opened + .seconds(29)) == nil)
        #expect(expired(timers, at: opened + .seconds(30)) == nil)
        #expect(expired(timers, at: opened + .seconds(30) + moment) == .close(.keepaliveExpired))
    }

    @Test func hearingFromTheDeviceRestartsItsKeepAlive() {
        var timers = session(keepAlive: 20)
        timers.heard(at: opened + .seconds(25))
        #expect(expired(timers, at: opened + .seconds(55)) == nil)
        #expect(expired(timers, at: opened + .seconds(55) + moment) == .close(.keepaliveExpired))
    }

    @Test func theKeepAliveIsEnforcedWithinTheConfiguredBounds() {
        // 1.5 × 2 s is below the minimum, 10 s.
        let short = session(keepAlive: 2)
        #expect(expired(short, at: opened + .seconds(10)) == nil)
        #expect(expired(short, at: opened + .seconds(10) + moment) == .close(.keepaliveExpired))
        // 1.5 × 65,535 s is above the maximum, 1,800 s.
        let long = session(keepAlive: .max)
        #expect(expired(long, at: opened + .seconds(1800)) == nil)
        #expect(expired(long, at: opened + .seconds(1800) + moment) == .close(.keepaliveExpired))
    }

    /// MQTT turns the keepalive off with 0; Herald still closes a connection silent for the
    /// maximum keepalive.
    @Test func aKeepAliveOfZeroIsEnforcedAtTheMaximum() {
        let timers = session(keepAlive: 0)
        #expect(expired(timers, at: opened + .seconds(1800)) == nil)
        #expect(expired(timers, at: opened + .seconds(1800) + moment) == .close(.keepaliveExpired))
    }

    /// A CONNECT trickled a byte at a time is never silent for long: its time is counted
    /// from the connection's start.
    @Test func theCONNECTMustArriveWithinTheConnectTimeoutOfTheStart() {
        var timers = ConnectionTimers(openedAt: opened, configuration: Self.configuration)
        for second in 1...5 {
            timers.heard(at: opened + .seconds(Int64(second)))
            #expect(expired(timers, at: opened + .seconds(Int64(second)), sessionAccepted: false) == nil)
        }
        #expect(expired(timers, at: opened + .seconds(5) + moment, sessionAccepted: false) == .close(.connectTimeout))
    }

    /// After the CONNECT, before its session is accepted (a refusal's answer is delayed by
    /// the brake on failures), silence past the keepalive is a connect timeout.
    @Test func silenceBeforeTheSessionIsAcceptedIsAConnectTimeout() {
        var timers = ConnectionTimers(openedAt: opened, configuration: Self.configuration)
        timers.connectReceived(keepAlive: 20, configuration: Self.configuration)
        #expect(expired(timers, at: opened + .seconds(30), sessionAccepted: false) == nil)
        #expect(expired(timers, at: opened + .seconds(30) + moment, sessionAccepted: false) == .close(.connectTimeout))
    }

    @Test func aCredentialsCheckPastTheAuthTimeoutIsAnsweredServerUnavailable() {
        var timers = ConnectionTimers(openedAt: opened, configuration: Self.configuration)
        timers.connectReceived(keepAlive: 60, configuration: Self.configuration)
        timers.authenticationStarted(at: opened + .seconds(1))
        #expect(expired(timers, at: opened + .seconds(4), sessionAccepted: false) == nil)
        #expect(expired(timers, at: opened + .seconds(4) + moment, sessionAccepted: false) == .authenticationTimedOut)
        // An answered check has no time limit.
        timers.authenticationEnded()
        #expect(expired(timers, at: opened + .seconds(60), sessionAccepted: false) == nil)
    }

    /// A check under way past its time is answered CONNACK 3 even when the device has also
    /// been silent past its keepalive: it hears why.
    @Test func theAuthTimeoutComesBeforeTheOtherRules() {
        var timers = ConnectionTimers(openedAt: opened, configuration: Self.configuration)
        timers.connectReceived(keepAlive: 2, configuration: Self.configuration)
        timers.authenticationStarted(at: opened)
        #expect(expired(timers, at: opened + .seconds(11), sessionAccepted: false) == .authenticationTimedOut)
    }

    @Test func aConnectionUnwritableLongerThanTheSlowConsumerTimeoutIsClosed() {
        var timers = session(keepAlive: 600)
        timers.becameUnwritable(at: opened + .seconds(10))
        // Another notice while still unwritable keeps the first instant.
        timers.becameUnwritable(at: opened + .seconds(20))
        #expect(expired(timers, at: opened + .seconds(40)) == nil)
        #expect(expired(timers, at: opened + .seconds(40) + moment) == .close(.slowConsumer))
    }

    @Test func becomingWritableAgainRestartsTheSlowConsumerRule() {
        var timers = session(keepAlive: 600)
        timers.becameUnwritable(at: opened + .seconds(10))
        timers.becameWritable()
        #expect(expired(timers, at: opened + .seconds(100)) == nil)
        timers.becameUnwritable(at: opened + .seconds(100))
        #expect(expired(timers, at: opened + .seconds(130)) == nil)
        #expect(expired(timers, at: opened + .seconds(130) + moment) == .close(.slowConsumer))
    }

    /// The timers of a session opened at `opened` whose CONNECT asked for `keepAlive` and
    /// whose credentials check was answered at once.
    private func session(keepAlive: UInt16) -> ConnectionTimers {
        var timers = ConnectionTimers(openedAt: opened, configuration: Self.configuration)
        timers.heard(at: opened)
        timers.connectReceived(keepAlive: keepAlive, configuration: Self.configuration)
        timers.authenticationStarted(at: opened)
        timers.authenticationEnded()
        return timers
    }

    private func expired(_ timers: ConnectionTimers, at now: NIODeadline, sessionAccepted: Bool = true) -> ConnectionTimers.Expiry? {
        timers.expired(at: now, sessionAccepted: sessionAccepted, configuration: Self.configuration)
    }
}
