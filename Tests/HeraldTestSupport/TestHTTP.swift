import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// One HTTP request of a test, on AsyncHTTPClient.
///
/// Tests don't use `URLSession`: on Linux, cancelling a task that awaits
/// `URLSession.data(for:)` while its answer arrives deadlocks two threads inside
/// FoundationNetworking (swift-corelibs-foundation#5412). On a two-core machine those are
/// the whole cooperative pool, and the test process stalls until the CI's time runs out.
public enum TestHTTP {
    /// An answer: its status, its headers (names in lowercase) and its body.
    public struct Answer: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: Data
    }

    /// Sends `method url` with `headers` and `body`, and reads the whole answer within
    /// `timeout`.
    public static func exchange(
        _ method: String,
        _ url: String,
        headers: [String: String] = [:],
        body: Data? = nil,
        timeout: Duration = .seconds(30)
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = HTTPMethod(rawValue: method)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await HTTPClient.shared.execute(request, timeout: TimeAmount(timeout))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        var answerHeaders: [String: String] = [:]
        for (name, value) in response.headers { answerHeaders[name.lowercased()] = value }
        return Answer(status: Int(response.status.code), headers: answerHeaders, body: Data(bytes.readableBytesView))
    }
}
