#if canImport(FoundationNetworking)
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// One HTTP/1.1 request on a connection of its own, on SwiftNIO, for the few calls a
/// device makes on Linux.
///
/// Not FoundationNetworking's `URLSession`: cancelling a task that awaits
/// `URLSession.data(for:)` while its answer arrives deadlocks two threads inside it
/// (swift-corelibs-foundation#5412), and its calls block Swift's cooperative threads while
/// they wait for its work queue. On Apple platforms ``HeraldAPIClient`` uses `URLSession`.
enum HTTPExchange {
    struct Answer {
        var status: Int
        var body: Data
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func send(
        _ method: String,
        _ url: URL,
        headers: [(String, String)],
        body: Data,
        timeout: Duration
    ) async throws -> Answer {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty else {
            throw Failure(description: "\(url) is not an http or https URL")
        }
        let secure = scheme == "https"
        let port = url.port ?? (secure ? 443 : 80)
        var target = url.path.isEmpty ? "/" : url.path
        if let query = url.query { target += "?" + query }
        var head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: target)
        head.headers.add(name: "Host", value: url.port.map { "\(host):\($0)" } ?? host)
        head.headers.add(name: "Content-Length", value: "\(body.count)")
        head.headers.add(name: "Connection", value: "close")
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        let request = head

        return try await withThrowingTaskGroup(of: Answer.self) { group in
            group.addTask {
                let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .connectTimeout(TimeAmount(timeout))
                    .connect(host: host, port: port) { channel in
                        channel.eventLoop.makeCompletedFuture {
                            if secure {
                                let context = try NIOSSLContext(configuration: .makeClientConfiguration())
                                let name = host.contains(":") || host.allSatisfy { $0.isNumber || $0 == "." } ? nil : host
                                try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: name))
                            }
                            try channel.pipeline.syncOperations.addHTTPClientHandlers()
                            return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                        }
                    }
                return try await channel.executeThenClose { inbound, outbound in
                    try await outbound.write(.head(request))
                    try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: body))))
                    try await outbound.write(.end(nil))
                    var status = 0
                    var received = ByteBuffer()
                    for try await part in inbound {
                        switch part {
                        case .head(let head): status = Int(head.status.code)
                        case .body(var bytes): received.writeBuffer(&bytes)
                        case .end: return Answer(status: status, body: Data(received.readableBytesView))
                        }
                    }
                    throw Failure(description: "\(method) \(url): the connection closed before the answer ended")
                }
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw Failure(description: "\(method) \(url): no answer within \(timeout)")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }
}
#endif
