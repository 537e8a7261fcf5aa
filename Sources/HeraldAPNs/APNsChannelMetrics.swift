import Metrics
import NIOConcurrencyHelpers

/// The APNs channel's counts, under the names the center gave them before APNs was a
/// channel (dashboards and the console's figures read them). Label values are bounded:
/// APNs reasons Herald knows (any other reason APNs sends counts as "Unknown", never as
/// its own label), and Herald's own codes.
struct APNsChannelMetrics: Sendable {
    let delivered = Counter(label: "herald_center_delivered_total", dimensions: [("channel", "apns")])
    private let refused = NIOLockedValueBox<[String: Counter]>([:])

    func outcome(_ outcome: APNsOutcome) {
        switch outcome {
        case .delivered: delivered.increment()
        case .invalidToken(let reason, _), .retryLater(let reason, _), .circuitOpen(let reason, _), .credentialsBroken(let reason),
            .failed(let reason, _):
            refusedCounter(Self.label(for: reason)).increment()
        case .credentialsRefused:
            refusedCounter(APNsError.credentialsRefused.reason).increment()
        }
    }

    /// A send that got no answer from APNs, by Herald's code (a fixed set).
    func error(_ error: APNsError) {
        refusedCounter(error.reason).increment()
    }

    /// The label value for an APNs reason: Apple's name when Herald knows it, else
    /// "Unknown" (APNs' text is not trusted to stay within a bounded set).
    static func label(for reason: APNsReason) -> String {
        if case .unknown = reason { return "Unknown" }
        return reason.rawValue
    }

    private func refusedCounter(_ reason: String) -> Counter {
        refused.withLockedValue { counters in
            if let counter = counters[reason] { return counter }
            let counter = Counter(label: "herald_center_apns_refused_total", dimensions: [("reason", reason)])
            counters[reason] = counter
            return counter
        }
    }
}
