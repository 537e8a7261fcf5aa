import Foundation
import HeraldAPI
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Prometheus
import Testing

/// The HTTP edge over a raw socket: requests that aren't valid HTTP/1.1 get the JSON
/// error (400 `malformed_request`) and a closed connection, never a 5xx or an empty body;
/// a 405 says what is allowed; an early 413 doesn't leave a client stuck writing; idle
/// and trickling connections are closed.
struct HTTPEdgeTests {
    static func withAPI(
        idleTimeout: Duration = .seconds(60),
        requestTimeout: Duration = .seconds(30),
        maxBodySize: Int = 1 << 20,
        _ body: @Sendable @escaping (Int) async throws -> Void
    ) async throws {
        try await APITest.live { configuration, _ in
            configuration.maxBodySize = maxBodySize
            configuration.idleTimeout = idleTimeout
            configuration.requestTimeout = requestTimeout
        } _: { api, _ in
            try await body(try #require(api.client.port))
        }
    }

    static let admin = "Authorization: \(Auth.admin.header)\r\n"

    @Test func aBodyShorterThanItsContentLengthThenAHalfCloseIsA400() async throws {
        try await Self.withAPI { port in
            let connection = try await RawHTTPConnection.connect(port: port)
            try await connection.send(
                "POST /admin/v1/apps HTTP/1.1\r\nHost: herald\r\n\(Self.admin)Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\":"
            )
            try await connection.finishSending()
            let response = try #require(try await connection.response())
            #expect(response.status == 400, "\(response)")
            #expect(response.errorCode == HeraldError.Code.malformedRequest.rawValue, "\(response)")
            await connection.close()
        }
    }

    @Test(arguments: [
        ("garbage request line", "HELLO THERE\r\n\r\n"),
        ("oversized header", "GET /healthz HTTP/1.1\r\nHost: herald\r\nX-Big: \(String(repeating: "a", count: 100_000))\r\n\r\n"),
        ("oversized URL", "GET /\(String(repeating: "a", count: 100_000)) HTTP/1.1\r\nHost: herald\r\n\r\n"),
        ("duplicate Content-Length", "POST /admin/v1/apps HTTP/1.1\r\nHost: herald\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}"),
        ("invalid Content-Length", "POST /admin/v1/apps HTTP/1.1\r\nHost: herald\r\nContent-Length: 2x\r\n\r\n{}"),
        (
            "Content-Length with Transfer-Encoding",
            "POST /admin/v1/apps HTTP/1.1\r\nHost: herald\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
        ),
    ])
    func aMalformedRequestIsAJSON400AndTheConnectionCloses(name: String, request: String) async throws {
        try await Self.withAPI { port in
            let connection = try await RawHTTPConnection.connect(port: port)
            try await connection.send(request)
            let response = try #require(try await connection.response(), "\(name): no response")
            #expect(response.status == 400, "\(name): \(response)")
            #expect(response.header("Content-Type")?.hasPrefix("application/json") == true, "\(name): \(response)")
            #expect(response.errorCode == HeraldError.Code.malformedRequest.rawValue, "\(name): \(response)")
            #expect(try await connection.closedByServer(within: .seconds(10)), "\(name): still open")
            await connection.close()
        }
    }

    @Test func a405SaysWhichMethodsAreAllowed() async throws {
        try await Self.withAPI { port in
            let connection = try await RawHTTPConnection.connect(port: port)
            try await connection.send("DELETE /v3/tags HTTP/1.1\r\nHost: herald\r\n\r\n")
            let response = try #require(try await connection.response())
            #expect(response.status == 405, "\(response)")
            #expect(response.header("Allow") == "GET", "\(response)")
            try await connection.send("PUT /admin/v1/apps/0123456789abcdef01234567 HTTP/1.1\r\nHost: herald\r\n\r\n")
            let other = try #require(try await connection.response())
            #expect(other.status == 405, "\(other)")
            #expect(Set(other.header("Allow")?.components(separatedBy: ", ") ?? []) == ["GET", "PATCH", "DELETE"], "\(other)")
            // A literal segment wins over a parameter, as in the router: /v3/push/recall is
            // not also a /v3/push/{msg_id} (whose DELETE it doesn't answer).
            for path in ["/v3/push/recall", "/v3/push/validate"] {
                try await connection.send("DELETE \(path) HTTP/1.1\r\nHost: herald\r\n\r\n")
                let literal = try #require(try await connection.response())
                #expect(literal.status == 405, "\(literal)")
                #expect(literal.header("Allow") == "POST", "\(literal)")
            }
            try await connection.send("GET /v3/push/0123456789abcdef01234567 HTTP/1.1\r\nHost: herald\r\n\r\n")
            let parameter = try #require(try await connection.response())
            #expect(parameter.status == 405, "\(parameter)")
            #expect(parameter.header("Allow") == "DELETE", "\(parameter)")
            await connection.close()
        }
    }

    @Test func aClientWritingAWholeBodyAfterAnEarly413IsNotLeftBlocked() async throws {
        try await Self.withAPI(maxBodySize: 1024) { port in
            let connection = try await RawHTTPConnection.connect(port: port)
            let size = 8 << 20
            try await connection.send(
                "POST /admin/v1/apps HTTP/1.1\r\nHost: herald\r\n\(Self.admin)Content-Type: application/json\r\nContent-Length: \(size)\r\n\r\n"
            )
            // The whole body: its write ends (read and dropped, or the connection closed)
            // instead of waiting forever for a server that stopped reading.
            let written = try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    try? await connection.send([UInt8](repeating: UInt8(ascii: " "), count: size))
                    return true
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(20))
                    return false
                }
                defer { group.cancelAll() }
                return try await group.next() ?? false
            }
            #expect(written, "the body's write never ended")
            let response = try #require(try await connection.response())
            #expect(response.status == 413, "\(response)")
            #expect(try await connection.closedByServer(within: .seconds(10)))
            await connection.close()
        }
    }

    @Test func anIdleConnectionIsClosed() async throws {
        try await Self.withAPI(idleTimeout: .milliseconds(500)) { port in
            let connection = try await RawHTTPConnection.connect(port: port)
            try await connection.send("GET /healthz HTTP/1.1\r\nHost: herald\r\n\r\n")
            #expect(try await connection.response()?.status == 200)
            #expect(try await connection.closedByServer(within: .seconds(10)))
        }
    }

    @Test func aRequestTricklingInIsClosedAfterTheRequestTimeout() async throws {
        try await Self.withAPI(idleTimeout: .seconds(60), requestTimeout: .seconds(1)) { port in
            let connection = try await RawHTTPConnection.connect(port: port)
            let head = Array("GET /healthz HTTP/1.1\r\nHost: herald\r\nX-Slow: \(String(repeating: "a", count: 200))".utf8)
            var closed = false
            for byte in head {
                try? await connection.send([byte])
                if connection.isClosed {
                    closed = true
                    break
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(closed, "a request trickling in for \(head.count * 50) ms was not closed")
            await connection.close()
        }
    }
}
