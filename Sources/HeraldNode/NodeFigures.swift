import Foundation
import HeraldStore
import Logging
import Prometheus
import ServiceLifecycle

/// Every few seconds, the node's figures as its `/metrics` has them (the same registry,
/// read back from its text), written to the cluster's table, so the console's dashboard on
/// any node draws every node's last hour.
struct NodeFigures: Service {
    /// How often: the dashboard's resolution.
    static let interval: Duration = .seconds(10)

    let node: String
    let registry: PrometheusCollectorRegistry
    let store: ClusterStore
    let interval: Duration
    let logger: Logger

    /// Until the node shuts down (gracefully, or cancelled): the sleep ends with it.
    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while true {
                do {
                    try await self.store.record(Self.sample(PrometheusText(self.registry.emitToString()), node: self.node, at: Date()))
                } catch is CancellationError {
                    return
                } catch {
                    self.logger.debug("node figures not recorded", metadata: ["error": "\(error)"])
                }
                try await Task.sleep(for: self.interval)
            }
        }
    }

    /// The dashboard's figures out of the metrics' text.
    static func sample(_ text: PrometheusText, node: String, at: Date) -> NodeSample {
        let apns = text.sum("herald_apns_sent_total")
        let apnsOK = text.sum("herald_apns_sent_total", where: ["status": "200"])
        return NodeSample(
            nodeID: node,
            at: at,
            connected: text.sum("herald_gateway_connections"),
            accepted: text.sum("hb_requests", where: ["http_route": "/v3/push", "http_request_method": "POST", "http_response_status_code": "200"]),
            deliveredTCP: text.sum("herald_center_delivered_total", where: ["channel": "tcp"]),
            deliveredAPNs: text.sum("herald_center_delivered_total", where: ["channel": "apns"]),
            apnsOK: apnsOK,
            apnsFailed: apns - apnsOK
        )
    }
}

/// Prometheus's text format, read just enough to sum a metric's series.
struct PrometheusText {
    struct Series {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    let series: [Series]

    init(_ text: String) {
        var series: [Series] = []
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            // name{label="value",…} 12 — or name 12.
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            let head = line[..<space]
            var labels: [String: String] = [:]
            let name: Substring
            if let brace = head.firstIndex(of: "{"), head.hasSuffix("}") {
                name = head[..<brace]
                var rest = head[head.index(after: brace)..<head.index(before: head.endIndex)]
                while let equals = rest.firstIndex(of: "=") {
                    let key = rest[..<equals].trimmingCharacters(in: CharacterSet(charactersIn: ", "))
                    rest = rest[rest.index(after: equals)...]
                    guard rest.first == "\"" else { break }
                    rest = rest.dropFirst()
                    var value = ""
                    var escaped = false
                    var end = rest.endIndex
                    for index in rest.indices {
                        let character = rest[index]
                        if escaped {
                            value.append(character == "n" ? "\n" : character)
                            escaped = false
                        } else if character == "\\" {
                            escaped = true
                        } else if character == "\"" {
                            end = index
                            break
                        } else {
                            value.append(character)
                        }
                    }
                    labels[key] = value
                    rest = end < rest.endIndex ? rest[rest.index(after: end)...] : rest[rest.endIndex...]
                }
            } else {
                name = head
            }
            series.append(Series(name: String(name), labels: labels, value: value))
        }
        self.series = series
    }

    /// The sum of `name`'s series whose labels include `labels`.
    func sum(_ name: String, where labels: [String: String] = [:]) -> Int64 {
        let total = series.filter { one in one.name == name && labels.allSatisfy { one.labels[$0.key] == $0.value } }.reduce(0) { $0 + $1.value }
        return Int64(total.rounded())
    }
}
