import Metrics

/// The gateway's metrics. Label values are bounded (close reasons are a fixed set).
struct GatewayMetrics: Sendable {
    let connections = Gauge(label: "herald_gateway_connections")
    /// Connections parked without a channel (``ParkingLot``), counted among the connections.
    let parked = Gauge(label: "herald_gateway_parked_connections")
    let connects = Counter(label: "herald_gateway_connects_total")
    let authFailures = Counter(label: "herald_gateway_auth_failures_total")
    /// Failed CONNECTs answered after a delay (``ConnectThrottle``).
    let authThrottled = Counter(label: "herald_gateway_auth_throttled_total")
    let deliveries = Counter(label: "herald_gateway_deliveries_total")
    let acknowledgements = Counter(label: "herald_gateway_acks_total")
    let replays = Counter(label: "herald_gateway_replayed_total")
    let deviceEvents = Counter(label: "herald_gateway_device_events_total")

    func disconnected(_ reason: MQTTSessionStateMachine.CloseReason) {
        Counter(label: "herald_gateway_disconnects_total", dimensions: [("reason", reason.rawValue)]).increment()
    }
}
