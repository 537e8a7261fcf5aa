import Foundation
import HeraldCore

/// One request as the sandbox reads it, over HTTP/2 or HTTP/1.1.
struct FCMSandboxRequest {
    var method = ""
    var path = ""
    var authorization: String?
    var body: [UInt8] = []
}

extension FCMSandboxState {
    /// The answer to one request: the routes of Google's token endpoint, FCM's send and
    /// the sandbox's own inspection.
    mutating func answer(_ request: FCMSandboxRequest, now: Date) -> Answer {
        let path = request.path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? request.path
        switch (request.method, path) {
        case ("POST", "/token"):
            return token(form: String(decoding: request.body, as: UTF8.self), now: now)
        case ("POST", _) where path.hasPrefix("/v1/projects/") && path.hasSuffix("/messages:send"):
            let project = String(path.dropFirst("/v1/projects/".count).dropLast("/messages:send".count))
            guard !project.isEmpty, !project.contains("/") else { break }
            return send(project: project, authorization: request.authorization, body: request.body, now: now)
        case ("GET", "/sandbox/stats"):
            return Answer(status: 200, body: Array(#"{"received":\#(receivedCount),"token_requests":\#(tokenRequests)}"#.utf8))
        case ("GET", "/sandbox/messages"):
            // The latest messages it took, newest first: what an operator checks.
            var messages: [JSONValue] = []
            for received in received.suffix(100).reversed() {
                messages.append(
                    .object([
                        "project": .string(received.project), "token": .string(received.token),
                        "received_at": .string(received.receivedAt.ISO8601Format()), "message": JSONAny.object(received.message).jsonValue,
                    ])
                )
            }
            var writer = JSONObjectWriter()
            writer.field("messages", JSONValue.array(messages))
            return Answer(status: 200, body: writer.finish())
        case ("GET", "/sandbox/assertions"):
            var writer = JSONObjectWriter()
            writer.field("assertions", assertions)
            return Answer(status: 200, body: writer.finish())
        default:
            break
        }
        return Self.error(404, "NOT_FOUND", "The requested URL \(path) was not found on this server.", errorCode: nil)
    }
}
