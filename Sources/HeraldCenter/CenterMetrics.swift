import CoreMetrics
import HeraldAPNs
import Metrics

/// The center's metrics. Label values are bounded (fixed sets, APNs reasons).
struct CenterMetrics: Sendable {
    let jobsClaimed = Counter(label: "herald_center_jobs_claimed_total")
    let jobsTakenOver = Counter(label: "herald_center_jobs_taken_over_total")
    let fannedOut = Counter(label: "herald_center_fanned_out_total")
    let tcp = Counter(label: "herald_center_delivered_total", dimensions: [("channel", "tcp")])
    let apns = Counter(label: "herald_center_delivered_total", dimensions: [("channel", "apns")])
    let recallCommands = Counter(label: "herald_center_recall_commands_total")

    func tcpDelivered(_ count: Int) {
        if count > 0 { tcp.increment(by: count) }
    }

    func apnsOutcome(_ outcome: APNsOutcome) {
        switch outcome {
        case .delivered: apns.increment()
        case .invalidToken(let reason, _), .retryLater(let reason, _), .credentialsBroken(let reason), .failed(let reason, _):
            Counter(label: "herald_center_apns_refused_total", dimensions: [("reason", reason.rawValue)]).increment()
        }
    }
}
