import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import PostgresNIO
import Prometheus
import Testing

@Suite struct OperationsTests {
    @Test func healthReadinessAndMetricsAnswer() async throws {
        try await APITest.run { api in
            #expect(try await api.send(.get, "/healthz").string("status") == "ok")
            #expect(try await api.send(.get, "/readyz").string("status") == "ready")
            let metrics = try await api.send(.get, "/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.headers[.contentType]?.hasPrefix("text/plain") == true)
        }
    }

    @Test func metricsExposeWhatTheApplicationRecorded() async throws {
        try await TestDatabase.withDatabase { url in
            let registry = PrometheusCollectorRegistry()
            registry.makeCounter(name: "herald_test_counter").increment(by: Int64(3))
            let (stores, pools) = TestDatabase.makeStores(url, maximumConnections: 2)
            let app = buildApplication(
                configuration: APIConfiguration(adminToken: APITest.adminToken),
                store: stores.api,
                registry: registry,
                services: pools,
                logger: TestDatabase.logger
            )
            try await app.test(.router) { client in
                let response = try await client.execute(uri: "/metrics", method: .get)
                #expect(String(buffer: response.body).contains("herald_test_counter 3"))
            }
        }
    }

    @Test func readinessFailsWhenTheDatabaseIsUnreachable() async throws {
        let url = try DatabaseURL("postgres://herald:x@127.0.0.1:1/herald?sslmode=disable")
        let (stores, pools) = TestDatabase.makeStores(url, maximumConnections: 1, connectTimeout: .seconds(5))
        let app = buildApplication(
            configuration: APIConfiguration(adminToken: APITest.adminToken),
            store: stores.api,
            registry: PrometheusCollectorRegistry(),
            services: pools,
            logger: TestDatabase.logger
        )
        try await app.test(.router) { client in
            let response = try await client.execute(uri: "/readyz", method: .get)
            #expect(response.status == .serviceUnavailable)
            #expect(String(buffer: response.body).contains("\(HeraldError.Code.unavailable.rawValue)"))
            #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok)
        }
    }

    @Test func theOpenAPIDocumentIsServed() async throws {
        try await APITest.run { api in
            let reply = try await api.send(.get, "/openapi.yaml")
            #expect(reply.status == 200)
            #expect(reply.body.hasPrefix("openapi: 3"))
        }
    }
}
