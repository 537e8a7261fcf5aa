import Foundation
import Metrics
import Prometheus
import Testing

@testable import HeraldNode

/// The dashboard's figures are read back from the node's own registry: the same text
/// `/metrics` serves.
@Suite struct NodeFiguresTests {
    @Test func aSampleSumsTheSeriesTheDashboardDraws() {
        let registry = PrometheusCollectorRegistry()
        let factory = PrometheusMetricsFactory(registry: registry)
        func counter(_ label: String, _ dimensions: [(String, String)]) -> any CounterHandler {
            factory.makeCounter(label: label, dimensions: dimensions)
        }
        counter("herald_center_delivered_total", [("channel", "tcp")]).increment(by: 7)
        counter("herald_center_delivered_total", [("channel", "apns")]).increment(by: 3)
        counter("herald_apns_sent_total", [("status", "200"), ("reason", "none")]).increment(by: 5)
        counter("herald_apns_sent_total", [("status", "410"), ("reason", "Unregistered")]).increment(by: 2)
        counter("herald_apns_sent_total", [("status", "400"), ("reason", "BadDeviceToken")]).increment(by: 1)
        // As Hummingbird's MetricsMiddleware names them.
        counter("hb.requests", [("http.route", "/v3/push"), ("http.request.method", "POST"), ("http.response.status_code", "200")])
            .increment(by: 11)
        counter("hb.requests", [("http.route", "/v3/push"), ("http.request.method", "POST"), ("http.response.status_code", "400")])
            .increment(by: 4)
        factory.makeRecorder(label: "herald_gateway_connections", dimensions: [], aggregate: false).record(Int64(42))

        let sample = NodeFigures.sample(PrometheusText(registry.emitToString()), node: "n1", at: Date())
        #expect(sample.deliveredTCP == 7 && sample.deliveredAPNs == 3)
        #expect(sample.apnsOK == 5 && sample.apnsFailed == 3)
        #expect(sample.accepted == 11, "\(registry.emitToString())")
        #expect(sample.connected == 42)
    }

    @Test func labelsWithEscapesAndSeriesWithoutLabelsAreRead() {
        let text = PrometheusText(
            """
            # TYPE a counter
            a 3
            b{x="q\\"uote",y="1"} 2
            b{y="2"} 5
            """
        )
        #expect(text.sum("a") == 3)
        #expect(text.sum("b") == 7)
        #expect(text.sum("b", where: ["x": #"q"uote"#]) == 2)
    }
}
