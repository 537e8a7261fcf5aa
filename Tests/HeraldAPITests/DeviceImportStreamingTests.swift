import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

/// An import's body is read as it arrives: neither the body size limit nor the request
/// timeout applies to it as a whole, only a pause longer than the timeout does.
@Suite struct DeviceImportStreamingTests {
    static func withAPI(_ body: @Sendable @escaping (APITest, TestApp, Int) async throws -> Void) async throws {
        try await APITest.live { configuration, _ in
            configuration.maxBodySize = 1024
            configuration.requestTimeout = .seconds(1)
            configuration.importBatchSize = 4
        } _: { api, _ in
            try await body(api, try await api.createApp(), try #require(api.client.port))
        }
    }

    static func head(_ app: TestApp) -> String {
        "POST /admin/v1/apps/\(app.appKey)/devices/import HTTP/1.1\r\nHost: herald\r\nAuthorization: \(Auth.admin.header)\r\n"
            + "Content-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n"
    }

    static func chunk(_ text: String) -> String {
        String(text.utf8.count, radix: 16) + "\r\n" + text + "\r\n"
    }

    @Test func aFileLongerAndSlowerThanTheLimitsIsReadToItsEnd() async throws {
        try await Self.withAPI { api, app, port in
            let connection = try await RawHTTPConnection.connect(port: port)
            try await connection.send(Self.head(app))
            // 12 rows of about 100 bytes, one every 300 ms: 3.6 s and 1.2 KB in all.
            for n in 0..<12 {
                let row = #"{"registration_id": "1a10189700000000\#(String(format: "%03x", n))", "tags": ["slow", "row-\#(n)"]}"# + "\n"
                try await connection.send(Self.chunk(row))
                try await Task.sleep(for: .milliseconds(300))
            }
            try await connection.send("0\r\n\r\n")
            let response = try #require(try await connection.response(), "the connection was closed")
            #expect(response.status == 200, "\(response)")
            #expect(response.body.contains(#""created":12"#), "\(response)")
            #expect(try await api.count("device_tags WHERE tag = 'slow'") == 12)
            await connection.close()
        }
    }

    @Test func anImportThatStopsComingIsClosedAndKeepsItsWrittenBatches() async throws {
        try await Self.withAPI { api, app, port in
            let connection = try await RawHTTPConnection.connect(port: port)
            try await connection.send(Self.head(app))
            let rows = (0..<6).map { n in #"{"registration_id": "1a10189700000000\#(String(format: "%03x", n))"}"# + "\n" }
            try await connection.send(Self.chunk(rows.joined()))
            #expect(try await connection.closedByServer(within: .seconds(10)))
            // The first full batch (4 rows) was written; the rest was never confirmed.
            #expect(try await api.count("devices") == 4)
            // Sent again whole, nothing is written twice.
            let again = try await api.importDevices(app, rows.joined(), as: "application/x-ndjson")
            #expect(try again.counts == ["rows": 6, "created": 2, "updated": 0, "unchanged": 4, "rejected": 0])
        }
    }
}
