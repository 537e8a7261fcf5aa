import Crypto
import Foundation
import HeraldCore
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// A small HTTP/1.1 JSON endpoint onto a running ``APNsSandbox``, for people and tools
/// outside its process.
///
/// - `GET /notifications` (`?device_token=`, `?limit=` for the newest N): recorded notifications.
/// - `DELETE /notifications`: forgets recorded notifications, rejections and notification centres.
/// - `GET /devices/{token}`: that device's notification centre.
/// - `GET /rejections`: refused requests.
/// - `GET /stats`: counts of accepted and refused requests and of connections.
/// - `POST /faults` `{"status": 503, "reason": "ServiceUnavailable"}`: every valid request
///   is answered so (an outage) until `DELETE /faults`; `GET /faults` shows it (or null).
/// - `GET /certificate`: the sandbox's TLS certificate PEM.
/// - `POST /keys` with `{"key_id", "team_id", "public_key_pem"}` (or `private_key_pem`):
///   accepts provider tokens signed by that key.
/// - Under another first segment, the ``SandboxInspectionResource`` of that name (the SMS
///   sandbox's `/sms`).
public final class SandboxInspectionServer: Service, Sendable {
    /// The port the endpoint listens on (the chosen one when bound to port 0).
    public let port: Int

    private let sandbox: APNsSandbox
    private let resources: [any SandboxInspectionResource]
    private let serverChannel: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>
    private let logger: Logger

    private init(
        sandbox: APNsSandbox,
        resources: [any SandboxInspectionResource],
        serverChannel: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>,
        logger: Logger
    ) {
        self.sandbox = sandbox
        self.resources = resources
        self.serverChannel = serverChannel
        self.port = serverChannel.channel.localAddress?.port ?? 0
        self.logger = logger
    }

    /// Binds the endpoint; ``run()`` serves it.
    public static func bind(
        sandbox: APNsSandbox,
        resources: [any SandboxInspectionResource] = [],
        host: String = "127.0.0.1",
        port: Int = 0,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger
    ) async throws -> SandboxInspectionServer {
        let channel = try await ServerBootstrap(group: eventLoopGroup)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(wrappingChannelSynchronously: channel)
                }
            }
        let server = SandboxInspectionServer(sandbox: sandbox, resources: resources, serverChannel: channel, logger: logger)
        logger.info("APNs sandbox inspection endpoint listening", metadata: ["apns_sandbox.inspect_port": "\(server.port)"])
        return server
    }

    /// Serves until graceful shutdown or cancellation.
    public func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                try await self.serverChannel.executeThenClose { inbound in
                    try await withThrowingDiscardingTaskGroup { group in
                        for try await connection in inbound {
                            group.addTask { await self.serve(connection) }
                        }
                    }
                }
            }
        } catch is CancellationError {
            // Graceful shutdown: stopping is the point.
        }
    }

    /// One connection: never throws, so a bad client can't stop the server.
    private func serve(_ connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>) async {
        do {
            try await connection.executeThenClose { inbound, outbound in
                var head: HTTPRequestHead?
                var body = ByteBuffer()
                for try await part in inbound {
                    switch part {
                    case .head(let value):
                        head = value
                        body.clear()
                    case .body(var chunk):
                        guard body.readableBytes + chunk.readableBytes <= 1 << 20 else { return }
                        body.writeBuffer(&chunk)
                    case .end:
                        guard let request = head else { return }
                        let response = respond(to: request, body: Array(body.readableBytesView))
                        var headers = HTTPHeaders()
                        headers.add(name: "content-type", value: response.contentType)
                        headers.add(name: "content-length", value: String(response.body.count))
                        if !request.isKeepAlive { headers.add(name: "connection", value: "close") }
                        try await outbound.write(.head(HTTPResponseHead(version: request.version, status: response.status, headers: headers)))
                        try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: response.body))))
                        try await outbound.write(.end(nil))
                        if !request.isKeepAlive { return }
                        head = nil
                    }
                }
            }
        } catch {
            logger.debug("Inspection connection failed", metadata: ["apns_sandbox.error": "\(error)"])
        }
    }

    struct Response {
        var status: HTTPResponseStatus
        var body: [UInt8]
        var contentType = "application/json"

        static func json(_ object: Any, status: HTTPResponseStatus = .ok) -> Response {
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
            return Response(status: status, body: Array(data))
        }

        static func error(_ status: HTTPResponseStatus, _ message: String) -> Response {
            json(["error": message], status: status)
        }
    }

    func respond(to request: HTTPRequestHead, body: [UInt8]) -> Response {
        let components = URLComponents(string: request.uri)
        let path = components?.path ?? request.uri
        var query: [String: String] = [:]
        for item in components?.queryItems ?? [] { query[item.name] = item.value ?? "" }
        let segments = path.split(separator: "/").map(String.init)

        let resource = segments.first ?? ""
        let method = request.method
        switch (resource, segments.count) {
        case ("notifications", 1) where method == .GET:
            var records = sandbox.notifications
            if let token = query["device_token"]?.lowercased() { records = records.filter { $0.deviceToken == token } }
            if let limit = query["limit"].flatMap(Int.init), limit >= 0 { records = Array(records.suffix(limit)) }
            return .json(records.map { $0.inspectionJSON })
        case ("notifications", 1) where method == .DELETE:
            return .json(["cleared": sandbox.clearRecords()])
        case ("devices", 2) where method == .GET:
            let token = segments[1].lowercased()
            let centre = sandbox.notificationCentre(for: token)
            return .json([
                "device_token": token,
                "shown": centre.shown.map { ["identifier": $0.identifier, "notification": $0.notification.inspectionJSON] },
                "background": centre.background.map { $0.inspectionJSON },
            ])
        case ("rejections", 1) where method == .GET:
            return .json(
                sandbox.rejections.map { rejection -> [String: Any] in
                    var object: [String: Any] = [
                        "status": rejection.status, "reason": rejection.reason, "connection_id": rejection.connectionID,
                    ]
                    object["device_token"] = rejection.deviceToken
                    return object
                }
            )
        case ("stats", 1) where method == .GET:
            return .json([
                "accepted": sandbox.acceptedCount,
                "rejected": sandbox.rejectedCount,
                "connections_accepted": sandbox.acceptedConnectionCount,
                "connections_open": sandbox.openConnectionCount,
            ])
        case ("certificate", 1) where method == .GET:
            guard let pem = sandbox.certificatePEM else { return .error(.notFound, "the sandbox runs without TLS") }
            return Response(status: .ok, body: Array(pem.utf8), contentType: "application/x-pem-file")
        case ("keys", 1) where method == .POST:
            return registerKey(body)
        case ("faults", 1) where method == .GET:
            guard case .reject(let status, let reason) = sandbox.faultForEveryRequest else {
                return .json(["fault": NSNull()])
            }
            return .json(["fault": ["status": status, "reason": reason]])
        case ("faults", 1) where method == .POST:
            let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
            if let count = object?["never_answer"] as? Int, object?.count == 1 {
                // The next `count` valid requests are read and never answered.
                guard (1...100_000).contains(count) else { return .error(.badRequest, "never_answer must be 1 to 100000") }
                sandbox.injectFaults(Array(repeating: .neverAnswer, count: count))
                logger.notice("The next \(count) requests get no answer")
                return .json(["queued": ["never_answer": count]], status: .created)
            }
            guard let object,
                let status = object["status"] as? Int, (400...599).contains(status),
                let reason = object["reason"] as? String, !reason.isEmpty
            else {
                return .error(.badRequest, "expected {\"status\": 400 to 599, \"reason\": \"an APNs reason\"} or {\"never_answer\": 1 to 100000}")
            }
            sandbox.setFaultForEveryRequest(.reject(status: status, reason: reason))
            logger.notice("Every request is answered \(status) \(reason) until DELETE /faults")
            return .json(["fault": ["status": status, "reason": reason]], status: .created)
        case ("faults", 1) where method == .DELETE:
            sandbox.setFaultForEveryRequest(nil)
            return .json(["fault": NSNull()])
        case ("notifications", 1), ("devices", 2), ("rejections", 1), ("stats", 1), ("certificate", 1), ("keys", 1), ("faults", 1):
            return .error(.methodNotAllowed, "method not allowed")
        default:
            if let resource = resources.first(where: { $0.name == resource }) {
                let answer = resource.respond(method: method.rawValue, segments: Array(segments.dropFirst()), query: query, body: body)
                return .json(answer.json, status: HTTPResponseStatus(statusCode: answer.status))
            }
            return .error(.notFound, "not found")
        }
    }

    private func registerKey(_ body: [UInt8]) -> Response {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any],
            let keyID = object["key_id"] as? String, !keyID.isEmpty,
            let teamID = object["team_id"] as? String, !teamID.isEmpty
        else { return .error(.badRequest, "expected {\"key_id\", \"team_id\", \"public_key_pem\"}") }
        let publicKey: P256.Signing.PublicKey
        if let pem = object["public_key_pem"] as? String, let key = try? P256.Signing.PublicKey(pemRepresentation: pem) {
            publicKey = key
        } else if let pem = object["private_key_pem"] as? String, let key = try? P256.Signing.PrivateKey(pemRepresentation: pem) {
            publicKey = key.publicKey
        } else {
            return .error(.badRequest, "public_key_pem is not a P-256 public key PEM")
        }
        sandbox.registerSigningKey(keyID: keyID, teamID: teamID, publicKey: publicKey)
        logger.info("Signing key registered", metadata: ["apns_sandbox.key_id": "\(keyID)", "apns_sandbox.team_id": "\(teamID)"])
        return .json(["key_id": keyID, "team_id": teamID], status: .created)
    }
}

extension RecordedNotification {
    /// The notification as the inspection endpoint shows it; the payload as JSON when it is JSON.
    var inspectionJSON: [String: Any] {
        var object: [String: Any] = [
            "apns_id": apnsID.lowercasedString,
            "device_token": deviceToken,
            "push_type": pushType,
            "priority": priority,
            "headers": headers,
            "connection_id": connectionID,
            "received_at": receivedAt.formatted(.iso8601),
        ]
        object["topic"] = topic
        object["expiration"] = expiration
        object["collapse_id"] = collapseID
        if let json = try? JSONSerialization.jsonObject(with: Data(payload), options: [.fragmentsAllowed]) {
            object["payload"] = json
        } else {
            object["payload_base64"] = Data(payload).base64EncodedString()
        }
        return object
    }
}
