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
        let result1 = circuit.admit(now: start)
        #expect(result1 == .send)
        let result2 = circuit.failed(reason: .serviceUnavailable, probe: false, now: start, random: 0)
        #expect(!result2)
        let result3 = circuit.failed(reason: .serviceUnavailable, probe: false, now: start, random: 0)
        #expect(!result3)
        let result4 = circuit.failed(reason: .serviceUnavailable, probe: false, now: start, random: 0)
        #expect(result4)
        let result5 = circuit.admit(now: start + .milliseconds(400)) == .refuse(reason: .serviceUnavailable, after: .milliseconds(600))
        #expect(result5)
    }

    @Test func anAnswerBetweenFailuresKeepsItClosed() {
        var circuit = breaker()
        circuit.failed(reason: .internalServerError, probe: false, now: start, random: 0)
        circuit.failed(reason: .internalServerError, probe: false, now: start, random: 0)
        circuit.succeeded()
        circuit.failed(reason: .internalServerError, probe: false, now: start, random: 0)
        circuit.failed(reason: .internalServerError, probe: false, now: start, random: 0)
        let result6 = circuit.admit(now: start)
        #expect(result6 == .send)
    }

    @Test func oneProbeAtATimeOnceTheOpeningEnds() {
        var circuit = breaker(threshold: 1)
        circuit.failed(reason: .serviceUnavailable, probe: false, now: start, random: 0)
        let later = start + .seconds(1)
        let result7 = circuit.admit(now: later)
        #expect(result7 == .probe)
        let result8 = circuit.admit(now: later) == .refuse(reason: .serviceUnavailable, after: .seconds(1))
        #expect(result8)
        // A probe nobody heard of for the probe timeout is replaced.
        let result9 = circuit.admit(now: later + .seconds(10))
        #expect(result9 == .probe)
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
            let result10 = circuit.admit(now: now)
            #expect(result10 == .probe)
            circuit.failed(reason: .serviceUnavailable, probe: true, now: now, random: 0)
        }
        #expect(openings == [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(8)])
    }

    @Test func anUnansweredProbeOpensItAgain() {
        var circuit = breaker(threshold: 1)
        circuit.failed(reason: .serviceUnavailable, probe: false, now: start, random: 0)
        let result11 = circuit.admit(now: start + .seconds(1))
        #expect(result11 == .probe)
        circuit.probeUnanswered(now: start + .seconds(2), random: 0)
        let result12 = circuit.admit(now: start + .seconds(3)) == .refuse(reason: .serviceUnavailable, after: .seconds(1))
        #expect(result12)
    }

    @Test func aSuccessfulProbeClosesItAndResetsTheBackoff() {
        var circuit = breaker(threshold: 1)
        circuit.failed(reason: .serviceUnavailable, probe: false, now: start, random: 0)
        let result13 = circuit.admit(now: start + .seconds(1))
        #expect(result13 == .probe)
        circuit.failed(reason: .serviceUnavailable, probe: true, now: start + .seconds(1), random: 0)
        let result14 = circuit.admit(now: start + .seconds(3))
        #expect(result14 == .probe)
        circuit.succeeded()
        let result15 = circuit.admit(now: start + .seconds(3))
        #expect(result15 == .send)
        #expect(!circuit.isOpen)
        circuit.failed(reason: .serviceUnavailable, probe: false, now: start + .seconds(4), random: 0)
        let result16 = circuit.admit(now: start + .seconds(4)) == .refuse(reason: .serviceUnavailable, after: .seconds(1))
        #expect(result16)
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
        let result17 = circuit.admit(now: start + .seconds(1))
        #expect(result17 == .probe)
    }
}
