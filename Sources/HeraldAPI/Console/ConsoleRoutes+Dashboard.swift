import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird

/// The dashboard: the cluster's nodes and their state, and over the last hour the devices
/// connected, the pushes accepted, the copies delivered and APNs' answers, per node, from
/// the figures each node's `/metrics` has (``ClusterStore/record(_:keep:)``). The page's
/// script fetches it again every few seconds. For people with a role on the instance.
extension ConsoleRoutes {
    /// A node whose heartbeat is older than this is shown as not answering (its peers
    /// declare it dead later, by their own liveness bound, and its row goes).
    static let lateHeartbeat: TimeInterval = 15

    @Sendable func dashboard(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let session = try await auth.consoleSession(request) else { return ConsolePages.redirect(to: Self.signInPath) }
        guard session.signedIn.person.instanceRole != nil else {
            return pages.page(
                "problem",
                title: "Not yours to see",
                ["message": "The dashboard is for people with a role on the instance."],
                person: session,
                status: .forbidden
            )
        }
        let nodes = try await store.console.nodes()
        let samples = try await store.console.samples(since: .seconds(3600))
        let now = nodes.first?.now ?? Date()
        let latest = Dictionary(grouping: samples, by: \.nodeID).compactMapValues { $0.max { $0.at < $1.at } }
        let charts = [
            ConsoleChart(title: "Connected devices", unit: "devices", samples: samples, now: now, rate: false) { $0.connected },
            ConsoleChart(title: "Pushes accepted", unit: "per second", samples: samples, now: now, rate: true) { $0.accepted },
            ConsoleChart(title: "Copies delivered (MQTT and APNs)", unit: "per second", samples: samples, now: now, rate: true) {
                $0.deliveredTCP + $0.deliveredAPNs
            },
            ConsoleChart(title: "APNs refused or failed", unit: "per second", samples: samples, now: now, rate: true) { $0.apnsFailed },
        ]
        let formatter = ISO8601DateFormatter()
        var rows: [[String: Any]] = nodes.map { node in
            let late = now.timeIntervalSince(node.heartbeatAt)
            let state =
                node.drainingAt != nil ? "draining" : late > Self.lateHeartbeat ? "not answering (last heartbeat \(Int(late)) s ago)" : "live"
            return [
                "nodeID": node.nodeID, "state": state, "live": state == "live", "startedAt": formatter.string(from: node.startedAt),
                "address": node.httpAddress ?? "—", "connected": latest[node.nodeID].map { String($0.connected) } ?? "—",
                "delivered": latest[node.nodeID].map { String($0.deliveredTCP + $0.deliveredAPNs) } ?? "—",
                "apns": latest[node.nodeID].map { "\($0.apnsOK) ok, \($0.apnsFailed) failed" } ?? "—",
            ]
        }
        // Nodes with samples in the last hour but no row: declared dead, or stopped.
        for (node, sample) in latest.sorted(by: { $0.key < $1.key }) where !nodes.contains(where: { $0.nodeID == node }) {
            rows.append([
                "nodeID": node, "state": "gone (last figures \(formatter.string(from: sample.at)))", "live": false, "startedAt": "—",
                "address": "—", "connected": "—", "delivered": String(sample.deliveredTCP + sample.deliveredAPNs),
                "apns": "\(sample.apnsOK) ok, \(sample.apnsFailed) failed",
            ])
        }
        return pages.page(
            "dashboard",
            title: "Dashboard",
            ["nodes": rows, "nodeCount": nodes.count, "charts": charts.map(\.context), "updated": formatter.string(from: now)],
            person: session
        )
    }
}
