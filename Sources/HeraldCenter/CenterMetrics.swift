import CoreMetrics
import HeraldAPNs
import Metrics
import NIOConcurrencyHelpers

/// The center's metrics. Label values are bounded: fixed sets, and APNs reasons Herald
/// knows (any other reason APNs sends counts as "Unknown", never as its own label).
struct CenterMetrics: Sendable {
    let jobsClaimed = Counter(label: "herald_center_jobs_claimed_total")
    let jobsTakenOver = Counter(label: "herald_center_jobs_taken_over_total")
    let fannedOut = Counter(label: "herald_center_fanned_out_total")
    /// Copies routed to the node that holds their device's connection.
    let routedToPeers = Counter(label: "herald_center_routed_to_peers_total")
    let tcp = Counter(label: "herald_center_delivered_total", dimensions: [("channel", "tcp")])
    let apns = Counter(label: "herald_center_delivered_total", dimensions: [("channel", "apns")])
    let recallCommands = Counter(label: "herald_center_recall_commands_total")
    private let refused = NIOLockedValueBox<[String: Counter]>([:])

    func tcpDelivered(_ count: Int) {
        if count > 0 { tcp.increment(by: count) }
    }

    func apnsOutcome(_ outcome: APNsOutcome) {
        switch outcome {
        case .delivered: apns.increment()
        case .invalidToken(let reason, _), .retryLater(let reason, _), .circuitOpen(let reason, _), .credentialsBroken(let reason),
            .failed(let reason, _):
            refusedCounter(Self.label(for: reason)).increment()
        case .credentialsRefused:
            refusedCounter(APNsError.credentialsRefused.reason).increment()
        }
    }

    /// A send that got no answer from APNs, by Herald's code (a fixed set).
    func apnsError(_ error: APNsError) {
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
