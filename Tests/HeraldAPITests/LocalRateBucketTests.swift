import HeraldStore
import Testing

@testable import HeraldAPI

/// The node's share of an app's bucket, as a state machine on a test clock.
struct LocalRateBucketTests {
    typealias Bucket = LocalRateBucket<ContinuousClock.Instant>
    let start = ContinuousClock.now
    let configuration = Bucket.Configuration(lifetime: .seconds(1), takeFraction: 0.05, maxTake: 100)

    @Test func itTakesAShareThenSpendsItWithoutAskingAgain() {
        var bucket = Bucket()
        #expect(bucket.admit(now: start, perMinute: 600, configuration: configuration) == .take(want: 30, returning: 0))
        #expect(
            bucket.took(RateTokens(granted: 30, remaining: 570), now: start, perMinute: 600) == .admitted(.init(limit: 600, remaining: 599, reset: 1))
        )
        for _ in 0..<29 {
            guard case .admitted = bucket.admit(now: start, perMinute: 600, configuration: configuration) else {
                Issue.record("a granted token was not spent")
                return
            }
        }
        #expect(bucket.tokens == 0)
        #expect(bucket.admit(now: start, perMinute: 600, configuration: configuration) == .take(want: 30, returning: 0))
    }

    @Test func tokensKeptPastTheirLifetimeAreGivenBack() {
        var bucket = Bucket()
        _ = bucket.admit(now: start, perMinute: 600, configuration: configuration)
        _ = bucket.took(RateTokens(granted: 30, remaining: 570), now: start, perMinute: 600)
        let later = start.advanced(by: .seconds(2))
        #expect(bucket.admit(now: later, perMinute: 600, configuration: configuration) == .take(want: 30, returning: 29))
    }

    @Test func anEmptyBucketIsRefusedLocallyUntilATokenHasRefilled() {
        var bucket = Bucket()
        _ = bucket.admit(now: start, perMinute: 60, configuration: configuration)
        let refused = bucket.took(RateTokens(granted: 0, remaining: 0.5), now: start, perMinute: 60)
        #expect(refused == .refused(.init(limit: 60, remaining: 0, reset: 60), retryAfter: .milliseconds(500)))
        // Within the half second: refused without asking the database.
        guard case .refused(_, let wait) = bucket.admit(now: start.advanced(by: .milliseconds(200)), perMinute: 60, configuration: configuration)
        else {
            Issue.record("asked the database while the bucket was known empty")
            return
        }
        #expect(wait == .milliseconds(300))
        // Then it asks again.
        #expect(
            bucket.admit(now: start.advanced(by: .milliseconds(600)), perMinute: 60, configuration: configuration) == .take(want: 3, returning: 0)
        )
    }

    @Test func aSmallLimitTakesOneAtATimeAndALargeOneAtMostTheMaximum() {
        var small = Bucket()
        #expect(small.admit(now: start, perMinute: 5, configuration: configuration) == .take(want: 1, returning: 0))
        var large = Bucket()
        #expect(large.admit(now: start, perMinute: 1_000_000, configuration: configuration) == .take(want: 100, returning: 0))
    }
}
