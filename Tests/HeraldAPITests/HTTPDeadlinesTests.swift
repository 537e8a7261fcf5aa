import Testing

@testable import HeraldAPI

/// The connection deadlines on their own, with the time moved by the test.
struct HTTPDeadlinesTests {
    typealias Deadlines = HTTPDeadlines<ContinuousClock.Instant>
    let start = ContinuousClock.now
    let configuration = Deadlines.Configuration(idleTimeout: .seconds(60), requestTimeout: .seconds(10), lingerTimeout: .seconds(2))

    @Test func aNewConnectionIsClosedAfterTheIdleTimeout() {
        let deadlines = Deadlines(configuration: configuration, now: start)
        #expect(deadlines.timerFired(now: start + .seconds(59)) == .wait(until: start + .seconds(60)))
        #expect(deadlines.timerFired(now: start + .seconds(60)) == .close)
    }

    @Test func aRequestMustArriveWholeWithinTheRequestTimeoutOfItsFirstByte() {
        var deadlines = Deadlines(configuration: configuration, now: start)
        deadlines.bytesReceived(now: start + .seconds(1))
        deadlines.bytesReceived(now: start + .seconds(5))
        #expect(deadlines.deadline == start + .seconds(11))
        deadlines.headReceived(now: start + .seconds(6))
        #expect(deadlines.timerFired(now: start + .seconds(11)) == .close)
    }

    @Test func noDeadlineRunsWhileARequestIsAnswered() {
        var deadlines = Deadlines(configuration: configuration, now: start)
        deadlines.bytesReceived(now: start)
        deadlines.headReceived(now: start)
        deadlines.endReceived()
        #expect(deadlines.deadline == nil)
        #expect(deadlines.timerFired(now: start + .seconds(600)) == .none)
        deadlines.responseEnded(now: start + .seconds(600), closing: false)
        #expect(deadlines.deadline == start + .seconds(660))
    }

    @Test func theNextRequestStartsItsOwnRequestTimeout() {
        var deadlines = Deadlines(configuration: configuration, now: start)
        deadlines.bytesReceived(now: start)
        deadlines.headReceived(now: start)
        deadlines.endReceived()
        deadlines.responseEnded(now: start + .seconds(1), closing: false)
        deadlines.bytesReceived(now: start + .seconds(30))
        #expect(deadlines.deadline == start + .seconds(40))
    }

    @Test func anAnswerThatClosesLeavesTheLingerTimeoutEvenWhileTheBodyStillArrives() {
        var deadlines = Deadlines(configuration: configuration, now: start)
        deadlines.bytesReceived(now: start)
        deadlines.headReceived(now: start)
        deadlines.responseEnded(now: start + .seconds(1), closing: true)
        #expect(deadlines.deadline == start + .seconds(3))
        deadlines.bytesReceived(now: start + .seconds(2))
        #expect(deadlines.timerFired(now: start + .seconds(3)) == .close)
    }

    @Test func aStreamedUploadMustOnlyKeepComing() {
        var deadlines = Deadlines(configuration: configuration, now: start)
        deadlines.bytesReceived(now: start)
        deadlines.headReceived(now: start, streamedUpload: true)
        for second in stride(from: 9, through: 90, by: 9) {
            deadlines.bytesReceived(now: start + .seconds(second))
            #expect(deadlines.timerFired(now: start + .seconds(second)) == .wait(until: start + .seconds(second + 10)))
        }
        // Ten seconds without a byte of it: closed.
        #expect(deadlines.timerFired(now: start + .seconds(100)) == .close)
        deadlines.endReceived()
        #expect(deadlines.deadline == nil)
        // The next request is an ordinary one again.
        deadlines.responseEnded(now: start + .seconds(101), closing: false)
        deadlines.bytesReceived(now: start + .seconds(102))
        deadlines.headReceived(now: start + .seconds(102))
        deadlines.bytesReceived(now: start + .seconds(110))
        #expect(deadlines.deadline == start + .seconds(112))
    }
}
