import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// Talks to the sandbox's HTTP/1.1 inspection endpoint: one connection per request.
struct InspectionClient: Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    var host: String
    var port: Int

    /// Sends the request and returns the status and the body.
    func request(_ method: HTTPMethod, _ path: String, body: [UInt8] = []) async throws -> (status: Int, body: [UInt8]) {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(5))
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            var head = HTTPRequestHead(version: .http1_1, method: method, uri: path)
            head.headers.add(name: "host", value: "\(host):\(port)")
            head.headers.add(name: "connection", value: "close")
            head.headers.add(name: "content-length", value: String(body.count))
            if !body.isEmpty { head.headers.add(name: "content-type", value: "application/json") }
            try await outbound.write(.head(head))
            if !body.isEmpty { try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: body)))) }
            try await outbound.write(.end(nil))
            var status = 0
            var received = ByteBuffer()
            for try await part in inbound {
                switch part {
                case .head(let response):
                    status = Int(response.status.code)
                case .body(var chunk):
                    received.writeBuffer(&chunk)
                case .end:
                    return (status, Array(received.readableBytesView))
                }
            }
            throw Failure(description: "the inspection endpoint closed before answering \(method) \(path)")
        }
    }

    /// Sends the request and decodes a JSON object answer; throws unless the status is 2xx.
    func json(_ method: HTTPMethod, _ path: String, object: [String: String]? = nil) async throws -> [String: Any] {
        let body = try object.map { Array(try JSONSerialization.data(withJSONObject: $0)) } ?? []
        let (status, answer) = try await request(method, path, body: body)
        guard (200..<300).contains(status) else {
            throw Failure(description: "\(method) \(path): HTTP \(status) \(String(decoding: answer, as: UTF8.self))")
        }
        return (try JSONSerialization.jsonObject(with: Data(answer)) as? [String: Any]) ?? [:]
    }

    /// Notifications the sandbox accepted since the last reset.
    func acceptedCount() async throws -> Int {
        (try await json(.GET, "/stats")["accepted"] as? Int) ?? 0
    }
}
