import HeraldRouting
import Testing

/// Which outcomes the center records as they come: those of a copy a request went out for.
@Suite struct ChannelOutcomeTests {
    @Test(arguments: [
        (ChannelOutcome.sent(.none), true),
        (.tokenDead(reason: "Unregistered", receipt: .none), true),
        (.failed(reason: "PayloadTooLarge", attempted: true, receipt: .none), true),
        (.failed(reason: "PayloadTooLarge", attempted: false, receipt: .none), false),
        (.retry(reason: "TooManyRequests", after: nil, attempted: true), true),
        (.retry(reason: "CircuitOpen", after: nil, attempted: false), false),
        (.credentialsRefused(reason: "InvalidProviderToken", attempted: true), true),
        (.credentialsRefused(reason: "CredentialsRefused", attempted: false), false),
        (.notConfigured, false),
    ])
    func aRequestWentOutOnlyWhenOneWasSent(_ outcome: ChannelOutcome, _ wentOut: Bool) {
        #expect(outcome.requestWentOut == wentOut)
    }
}
