import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird
import NIOCore
import Prometheus

/// Liveness, readiness, metrics and the API description.
struct OperationsRoutes {
    let store: APIStore
    let registry: PrometheusCollectorRegistry
    /// Whether the node drains (SIGTERM): it is not ready, so a load balancer sends it nothing new.
    let draining: @Sendable () -> Bool

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/healthz", access: .open, use: health)
        routes.on(.get, "/readyz", access: .open, use: ready)
        routes.on(.get, "/metrics", access: .open, use: metrics)
        routes.on(.get, "/openapi.yaml", access: .open, use: openAPI)
    }

    @Sendable func health(_ request: Request, context: HeraldRequestContext) async throws -> StatusResponse {
        StatusResponse(status: "ok")
    }

    /// Ready when the node isn't draining and the database answers within two seconds.
    @Sendable func ready(_ request: Request, context: HeraldRequestContext) async throws -> StatusResponse {
        guard !draining() else { throw HeraldError(.unavailable, "the node is draining") }
        let answered = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                do {
                    try await store.ping()
                    return true
                } catch {
                    return false
                }
            }
            group.addTask {
                try await Task.sleep(for: .seconds(2))
                return false
            }
            defer { group.cancelAll() }
            return try await group.next() ?? false
        }
        guard answered else { throw HeraldError(.unavailable, "the database is not reachable") }
        return StatusResponse(status: "ready")
    }

    @Sendable func metrics(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        // The heap as of this scrape: what memory per connection is judged by.
        if let heap = ProcessHeap.bytesInUse { registry.makeGauge(name: "herald_process_heap_bytes").set(Double(heap)) }
        var bytes: [UInt8] = []
        registry.emit(into: &bytes)
        return Response(
            status: .ok,
            headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes))
        )
    }

    @Sendable func openAPI(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "application/yaml; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: EmbeddedDocuments.openAPI))
        )
    }
}

struct StatusResponse: ResponseEncodable {
    var status: String
}
