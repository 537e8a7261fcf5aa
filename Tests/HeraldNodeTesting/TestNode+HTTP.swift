import Foundation
import HeraldTestSupport

/// An answer of the API: its status, its JSON body (``JSON/null`` when there is none) and
/// its headers.
public struct HTTPAnswer: Sendable {
    public var status: Int
    public var json: JSON
    public var headers: [String: String]

    /// The error code of an error answer.
    public var error: Int? { json["error"]["code"].int }
    /// The `msg_id` of a push's answer.
    public var msgID: String { json["msg_id"].string ?? "" }
}

/// Who a request is made as.
public enum Caller: Sendable {
    /// The test's app, with its master secret.
    case app
    /// Another app key and secret (Basic).
    case basic(String, String)
    /// The admin token.
    case admin
    /// `Authorization: Bearer <token>` (an API key, an admin key).
    case bearer(String)
    case anonymous
}

extension TestNode {
    /// Sends a request to the API, as the test's app unless told otherwise.
    public func call(_ method: String, _ path: String, _ body: JSON? = nil, as caller: Caller = .app) async throws -> HTTPAnswer {
        var headers: [String: String] = [:]
        switch caller {
        case .app: headers["Authorization"] = Self.basic(appKey, masterSecret)
        case .basic(let user, let password): headers["Authorization"] = Self.basic(user, password)
        case .admin: headers["Authorization"] = "Bearer \(Self.adminToken)"
        case .bearer(let token): headers["Authorization"] = "Bearer \(token)"
        case .anonymous: break
        }
        var data: Data?
        if let body {
            headers["Content-Type"] = "application/json"
            data = try JSONEncoder().encode(body)
        }
        let answer = try await TestHTTP.exchange(method, apiURL.absoluteString + path, headers: headers, body: data)
        return HTTPAnswer(status: answer.status, json: (try? JSONDecoder().decode(JSON.self, from: answer.body)) ?? .null, headers: answer.headers)
    }

    private static func basic(_ user: String, _ password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    /// `POST /v3/push` as the test's app.
    public func push(_ body: JSON) async throws -> HTTPAnswer {
        try await call("POST", "/v3/push", body)
    }

    /// The report of a message once it settled (`done`, and `until` holds), or the last one
    /// seen after `timeout`.
    public func settledReport(
        _ msgID: String,
        timeout: Duration = .seconds(15),
        until: @Sendable (JSON) -> Bool = { _ in true }
    ) async throws -> JSON {
        let deadline = ContinuousClock.now + timeout
        var last: JSON = .null
        while ContinuousClock.now < deadline {
            let answer = try await call("GET", "/v3/report/received?msg_ids=\(msgID)")
            last = answer.json["reports"][0]
            if last["done"].bool == true, until(last) { return last }
            try await Task.sleep(for: .milliseconds(50))
        }
        return last
    }

    /// A device's delivery status for a message (`POST /v3/report/status/message`).
    public func status(_ msgID: String, _ registrationID: String) async throws -> String? {
        let answer = try await call("POST", "/v3/report/status/message", ["msg_id": JSON(msgID), "registration_ids": [JSON(registrationID)]])
        return answer.json["statuses"][registrationID]["status"].string
    }

    /// The copy's status once it is `expected`, or the last one read after `timeout`:
    /// outcomes are recorded a moment after they happen (the center records them in
    /// batches), so a test that saw the device get its copy waits for the record.
    public func status(
        _ msgID: String,
        _ registrationID: String,
        becomes expected: String,
        timeout: Duration = .seconds(10)
    ) async throws
        -> String?
    {
        let deadline = ContinuousClock.now + timeout
        var status = try await self.status(msgID, registrationID)
        while status != expected, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            status = try await self.status(msgID, registrationID)
        }
        return status
    }
}
