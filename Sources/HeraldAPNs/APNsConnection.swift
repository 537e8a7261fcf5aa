import Foundation
import HeraldCore
import HeraldHTTP2
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL

/// One HTTP/2 connection to APNs: a HeraldHTTP2 client connection (streams without a
/// channel each, the requests queued meanwhile written with one flush) whose root stream
/// ``APNsConnectionHandler`` watches for the pool (the stream limit, GOAWAY, PING).
final class APNsConnection: Sendable {
    let id: Int
    private let http2: HTTP2ClientConnection
    var channel: any Channel { http2.channel }

    private init(id: Int, http2: HTTP2ClientConnection) {
        self.id = id
        self.http2 = http2
    }

    /// Connects, completes TLS (ALPN h2) or h2c, and waits for the peer's first SETTINGS.
    static func connect(
        id: Int,
        configuration: APNsClient.Configuration,
        sslContext: NIOSSLContext?,
        events: APNsConnectionEvents
    ) async throws -> APNsConnection {
        let pingInterval = TimeAmount(configuration.pingInterval)
        let pingTimeout = TimeAmount(configuration.pingTimeout)
        do {
            let http2 = try await HTTP2ClientConnection.connect(
                host: configuration.host,
                port: configuration.port,
                sslContext: sslContext,
                serverHostname: configuration.tlsServerName ?? (Self.isIPAddress(configuration.host) ? nil : configuration.host),
                eventLoop: configuration.eventLoopGroup.next(),
                connectTimeout: TimeAmount(configuration.connectTimeout),
                rootHandler: { ready in
                    APNsConnectionHandler(events: events, ready: ready, pingInterval: pingInterval, pingTimeout: pingTimeout)
                }
            )
            return APNsConnection(id: id, http2: http2)
        } catch HTTP2RequestError.connectionClosed {
            throw APNsError(.deadlineExceeded, detail: "no SETTINGS from the peer")
        }
    }

    /// Sends one request on a new stream and waits for the answer or the deadline.
    func execute(headers: HPACKHeaders, body: [UInt8], deadline: NIODeadline) async throws -> APNsResponse {
        let answer: HTTP2Response
        do {
            answer = try await http2.execute(headers: headers, body: body, deadline: deadline)
        } catch let error as HTTP2RequestError {
            switch error {
            case .connectionClosed: throw APNsError.connectionClosed
            case .deadlineExceeded: throw APNsError.deadlineExceeded
            }
        }
        // APNs echoes the request's apns-id: read only for errors, which log it.
        var response = APNsResponse(
            status: answer.status,
            apnsID: answer.status == 200 ? nil : answer.headers.first(name: "apns-id").flatMap(UUID.init(canonical:))
        )
        if let body = answer.body { response.readBody(body) }
        return response
    }

    func close() {
        http2.close()
    }

    private static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
