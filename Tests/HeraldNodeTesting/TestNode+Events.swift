import Foundation
import HeraldTestSupport
import NIOCore
import NIOPosix

/// One server-sent event of the event stream.
public struct ServerSentEvent: Sendable {
    public var id: String
    public var event: String
    public var data: JSON
}

extension TestNode {
    /// Turns the test app's event recording on or off (admin API).
    public func recordEvents(_ enabled: Bool = true) async throws {
        let answer = try await call("PUT", "/admin/v1/apps/\(appKey)/events", ["enabled": .bool(enabled)], as: .admin)
        guard answer.status == 200 else { throw TestFailure("events setting answered \(answer.status)") }
    }

    /// Reads `GET /v3/events` (query `query`) as server-sent events over a plain socket,
    /// as the test's app, until `count` events came or `timeout` passed, then closes.
    public func serverSentEvents(
        query: String,
        lastEventID: String? = nil,
        count: Int,
        timeout: Duration = .seconds(10)
    ) async throws
        -> [ServerSentEvent]
    {
        let port = apiURL.port ?? 80
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
            }
        let credentials = Data("\(appKey):\(masterSecret)".utf8).base64EncodedString()
        var head = "GET /v3/events?\(query) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic \(credentials)\r\nAccept: text/event-stream\r\n"
        if let lastEventID { head += "Last-Event-ID: \(lastEventID)\r\n" }
        head += "\r\n"
        let request = head
        return try await withThrowingTaskGroup(of: [ServerSentEvent].self) { group in
            group.addTask {
                try await channel.executeThenClose { inbound, outbound in
                    try await outbound.write(ByteBuffer(string: request))
                    var text = ""
                    var events: [ServerSentEvent] = []
                    for try await chunk in inbound {
                        // Line ends only: the chunked encoding's size lines hold no colon and
                        // are passed over (each event is written whole, in one chunk).
                        text += String(buffer: chunk).replacingOccurrences(of: "\r", with: "")
                        // Blocks end with a blank line; the response head is the first.
                        while let end = text.range(of: "\n\n") {
                            let block = String(text[..<end.lowerBound])
                            text = String(text[end.upperBound...])
                            var fields: [String: String] = [:]
                            for line in block.split(separator: "\n") {
                                guard let colon = line.firstIndex(of: ":") else { continue }
                                fields[String(line[..<colon])] = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
                            }
                            guard let id = fields["id"], let data = fields["data"] else { continue }
                            let json = (try? JSONDecoder().decode(JSON.self, from: Data(data.utf8))) ?? .null
                            events.append(ServerSentEvent(id: id, event: fields["event"] ?? "", data: json))
                            if events.count >= count { return events }
                        }
                    }
                    return events
                }
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return []
            }
            let first = try await group.next() ?? []
            group.cancelAll()
            return first
        }
    }

    /// `GET /v3/messages/{msg_id}/devices/{registration_id}` once it holds `type` (or the
    /// last answer after `timeout`).
    public func timeline(
        _ msgID: String,
        _ registrationID: String,
        until type: String,
        timeout: Duration = .seconds(10)
    ) async throws
        -> HTTPAnswer
    {
        let deadline = ContinuousClock.now + timeout
        var answer = try await call("GET", "/v3/messages/\(msgID)/devices/\(registrationID)")
        while ContinuousClock.now < deadline, !(answer.json["timeline"].array ?? []).contains(where: { $0["type"].string == type }) {
            try await Task.sleep(for: .milliseconds(50))
            answer = try await call("GET", "/v3/messages/\(msgID)/devices/\(registrationID)")
        }
        return answer
    }
}
