import Metrics
import NIOConcurrencyHelpers

/// The client's metrics: sent by status and reason, in flight, latency, broken credentials.
struct APNsMetrics: Sendable {
    private let sent = NIOLockedValueBox<[String: Counter]>([:])
    private let inFlight = Meter(label: "herald_apns_in_flight")
    private let latency = Timer(label: "herald_apns_request_duration_seconds")
    private let credentialsBroken: Gauge
    private let expiredProviderTokens: Counter
    /// The counter of nearly every answer, kept at hand.
    private let delivered = Counter(label: "herald_apns_sent_total", dimensions: [("status", "200"), ("reason", "none")])

    init(bundleID: String) {
        credentialsBroken = Gauge(label: "herald_apns_credentials_broken", dimensions: [("bundle_id", bundleID)])
        expiredProviderTokens = Counter(label: "herald_apns_expired_provider_token_total", dimensions: [("bundle_id", bundleID)])
    }

    func started() { inFlight.increment() }
    func ended() { inFlight.decrement() }

    /// One answer from APNs (status 0: no answer).
    func answered(status: Int, reason: APNsReason?, duration: Duration) {
        let (seconds, attoseconds) = duration.components
        latency.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        if status == 200 && reason == nil {
            delivered.increment()
            return
        }
        // Unknown reasons are bounded to one label value.
        let label =
            switch reason {
            case .unknown: "unknown"
            case .some(let reason): reason.rawValue
            case nil: "none"
            }
        let key = "\(status)/\(label)"
        let counter = sent.withLockedValue { counters in
            if let counter = counters[key] { return counter }
            let counter = Counter(label: "herald_apns_sent_total", dimensions: [("status", String(status)), ("reason", label)])
            counters[key] = counter
            return counter
        }
        counter.increment()
    }

    func markCredentialsBroken() { credentialsBroken.record(1) }

    /// APNs answered ExpiredProviderToken.
    func providerTokenExpired() { expiredProviderTokens.increment() }
}
