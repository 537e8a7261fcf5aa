import Foundation
import HeraldTestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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
    case anonymous
}

extension TestNode {
    /// Sends a request to the API, as the test's app unless told otherwise.
    public func call(_ method: String, _ path: String, _ body: JSON? = nil, as caller: Caller = .app) async throws -> HTTPAnswer {
        var request = URLRequest(url: URL(string: apiURL.absoluteString + path)!)
        request.httpMethod = method
        switch caller {
        case .app: request.setValue(Self.basic(appKey, masterSecret), forHTTPHeaderField: "Authorization")
        case .basic(let user, let password): request.setValue(Self.basic(user, password), forHTTPHeaderField: "Authorization")
        case .admin: request.setValue("Bearer \(Self.adminToken)", forHTTPHeaderField: "Authorization")
        case .anonymous: break
        }
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONEncoder().encode(body)
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as? HTTPURLResponse
        var headers: [String: String] = [:]
        for (name, value) in http?.allHeaderFields ?? [:] { headers["\(name)".lowercased()] = "\(value)" }
        return HTTPAnswer(status: http?.statusCode ?? 0, json: (try? JSONDecoder().decode(JSON.self, from: data)) ?? .null, headers: headers)
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
