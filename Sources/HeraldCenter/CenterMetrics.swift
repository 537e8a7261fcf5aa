import CoreMetrics
import Metrics
import NIOConcurrencyHelpers

/// The center's metrics (each channel counts its own). Label values are bounded: fixed sets.
struct CenterMetrics: Sendable {
    let jobsClaimed = Counter(label: "herald_center_jobs_claimed_total")
    let jobsTakenOver = Counter(label: "herald_center_jobs_taken_over_total")
    let fannedOut = Counter(label: "herald_center_fanned_out_total")
    /// Copies routed to the node that holds their device's connection.
    let routedToPeers = Counter(label: "herald_center_routed_to_peers_total")
    let tcp = Counter(label: "herald_center_delivered_total", dimensions: [("channel", "tcp")])
    let recallCommands = Counter(label: "herald_center_recall_commands_total")

    func tcpDelivered(_ count: Int) {
        if count > 0 { tcp.increment(by: count) }
    }
}
