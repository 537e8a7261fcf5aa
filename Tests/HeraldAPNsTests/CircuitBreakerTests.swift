import Testing

@testable import HeraldAPNs

@Suite("The circuit breaker, on an injected clock")
struct CircuitBreakerTests {
    private let start = ContinuousClock.now

    private func breaker(threshold: Int = 3, jitter: Double = 0) -> APNsCircuitBreaker {
        var configuration = APNsCircuitBreaker.Configuration()
        configuration.failureThreshold = threshold
        configuration.minimumOpen = .seconds(1)
        configuration.maximumOpen = .seconds(8)
        configuration.jitter = jitter
        return APNsCircuitBreaker(configuration: configuration, probeTimeout: .seconds(10))
    }

    @Test func opensAfterThresholdFailuresInARowAndRefusesWithoutSending() {
        var circuit = breaker()
        let decision1 = circuit.admit(now: start)
        #expect(decision1 == .send)
        let opened1 = circuit.failed(reason: .serviceUnavailable, probe: false, now: start, random: 0)
        #expect(!opened1)
        let opened2 = circuit.failed(reason: .serviceUnavailable, probe: false, now: start, random: 0)
        #expect(!opened2)
        let opened3 = circuit.failed(reason: .serviceUnavailable, probe: false, now: start, random: 0)
        #expect(opened3)
        let decision2 = circuit.admit(now: start + .milliseconds(400))
        #expect(decision2 == .refuse(reason: .serviceUnavailable, after: .milliseconds(600)))
    }

    @Test func anAnswerBetweenFailuresKeepsItClosed() {
        var circuit = breaker()
        circuit.failed(reason: .internalServerError, probe: false, now: start, random: 0)
        circuit.failed(reason: .internalServerError, probe: false, now: start, random: 0)
        circuit.succeeded()
        circuit.failed(reason: .internalServerError, probe: false, now: start, random: 0)
        circuit.failed(reason: .internalServerError, probe: false, now: start, random: 0)
        let decision3 = circuit.admit(now: start)
        #expect(decision3 == .send)
    }

    @Test func oneProbeAtATimeOnceTheOpeningEnds() {
        var circuit = breaker(threshold: 1)
        circuit.failed(reason: .serviceUnavailable, probe: false, now: start, random: 0)
        let later = start + .seconds(1)
        let decision4 = circuit.admit(now: later)
        #expect(decision4 == .probe)
        let decision5 = circuit.admit(now: later) == .refuse(reason: .serviceUnavailable, after: .seconds(1))
        #expect(decision5)
        // A probe nobody heard of for the probe timeout is replaced.
        let decision6 = circuit.admit(now: later + .seconds(10))
        #expect(decision6 == .probe)
    }

    @Test func aFailedProbeDoublesTheOpeningUpToTheMaximum() {
        var circuit = breaker(threshold: 1)
        var now = start
        circuit.failed(reason: .serviceUnavailable, probe: false, now: now, random: 0)
        var openings: [Duration] = []
        for _ in 0..<5 {
            guard case .refuse(_, let after) = circuit.admit(now: now) else {
                Issue.record("expected a refusal")
                return
            }
            openings.append(after)
            now += after
            let decision7 = circuit.admit(now: now)
            #expect(decision7 == .probe)
            circuit.failed(reason: .serviceUnavailable, probe: true, now: now, random: 0)
        }
        #expect(openings == [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(8)])
    }

    @Test func anUnansweredProbeOpensItAgain() {
        var circuit = breaker(threshold: 1)
        circuit.failed(reason: .serviceUnavailable, probe: false, now: start, random: 0)
        let decision8 = circuit.admit(now: start + .seconds(1))
        #expect(decision8 == .probe)
        circuit.probeUnanswered(now: start + .seconds(2), random: 0)
        let decision9 = circuit.admit(now: start + .seconds(3)) == .refuse(reason: .serviceUnavailable, after: .seconds(1))
        #expect(decision9)
    }

    @Test func aSuccessfulProbeClosesItAndResetsTheBackoff() {
        var circuit = breaker(threshold: 1)
        circuit.failed(reason: .serviceUnavailable, probe: false, now: start, random: 0)
        let decision10 = circuit.admit(now: start + .seconds(1))
        #expect(decision10 == .probe)
        circuit.failed(reason: .serviceUnavailable, probe: true, now: start + .seconds(1), random: 0)
        let decision11 = circuit.admit(now: start + .seconds(3))
        #expect(decision11 == .probe)
        circuit.succeeded()
        let decision12 = circuit.admit(now: start + .seconds(3))
        #expect(decision12 == .send)
        #expect(!circuit.isOpen)
        circuit.failed(reason: .serviceUnavailable, probe: false, now: start + .seconds(4), random: 0)
        let decision13 = circuit.admit(now: start + .seconds(4)) == .refuse(reason: .serviceUnavailable, after: .seconds(1))
        #expect(decision13)
    }

    @Test func jitterShortensAnOpeningByAtMostItsFraction() {
        var circuit = breaker(threshold: 1, jitter: 0.5)
        circuit.failed(reason: .serviceUnavailable, probe: false, now: start, random: 0.999)
        guard case .refuse(_, let after) = circuit.admit(now: start) else {
            Issue.record("expected a refusal")
            return
        }
        #expect(after > .milliseconds(500) && after < .milliseconds(502))
    }

    @Test func lateFailuresOfRequestsSentBeforeItOpenedDontExtendIt() {
        var circuit = breaker(threshold: 1)
        circuit.failed(reason: .serviceUnavailable, probe: false, now: start, random: 0)
        circuit.failed(reason: .internalServerError, probe: false, now: start + .milliseconds(500), random: 0)
        let decision14 = circuit.admit(now: start + .seconds(1))
        #expect(decision14 == .probe)
    }
}
