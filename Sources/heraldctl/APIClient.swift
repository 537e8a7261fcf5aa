import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Herald's Open API over HTTP: builds requests with the right credentials and turns
/// error answers into `CLIError`s.
struct APIClient: Sendable {
    /// Which credentials a route takes.
    enum Credentials: Sendable {
        /// `Authorization: Bearer <admin token>`, for `/admin/v1`.
        case admin
        /// HTTP Basic `app_key:master_secret`, for the operator routes under `/v3`.
        case app
    }

    /// A successful answer.
    struct Response: Sendable {
        var status: Int
        var body: Data

        /// The body decoded as `T`; an answer of another shape is a protocol error.
        func decode<T: Decodable>(_ type: T.Type, url: String) throws(CLIError) -> T {
            do {
                return try JSONDecoder().decode(T.self, from: body)
            } catch {
                throw .unexpectedResponse(status: status, url: url)
            }
        }
    }

    let connection: Connection

    init(connection: Connection) {
        self.connection = connection
    }

    /// No cookies, cache or stored credentials: each request carries its own.
    private var sessionConfiguration: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = connection.requestTimeout
        configuration.timeoutIntervalForResource = connection.requestTimeout
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        configuration.urlCredentialStorage = nil
        return configuration
    }

    func get(_ path: String, query: [String: String] = [:], _ credentials: Credentials) async throws(CLIError) -> Response {
        try await send("GET", path, query: query, body: nil, credentials)
    }

    func delete(_ path: String, _ credentials: Credentials) async throws(CLIError) -> Response {
        try await send("DELETE", path, body: nil, credentials)
    }

    /// Sends `body` encoded as JSON.
    func send(_ method: String, _ path: String, json body: some Encodable, _ credentials: Credentials) async throws(CLIError) -> Response {
        try await send(method, path, body: try Self.json(body), credentials)
    }

    /// `body` as the JSON heraldctl sends: keys sorted, slashes as they are.
    static func json(_ body: some Encodable) throws(CLIError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(body)
        } catch {
            throw .usage("cannot encode the request body")
        }
    }

    /// Sends the file at `file` as the body of a request, streamed: the connection must
    /// keep moving (no pause longer than the request timeout), however long the whole takes.
    func upload(_ method: String, _ path: String, file: URL, contentType: String, _ credentials: Credentials) async throws(CLIError) -> Response {
        let url = try makeURL(path, query: [:])
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: connection.requestTimeout)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue("heraldctl/\(HeraldCtl.version)", forHTTPHeaderField: "User-Agent")
        request.setValue(try authorization(credentials), forHTTPHeaderField: "Authorization")
        request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        let configuration = sessionConfiguration
        configuration.timeoutIntervalForResource = 7 * 24 * 3600
        do {
            let (data, response) = try await HTTPExchange.perform(request, fromFile: file, configuration: configuration)
            return try answer(data, response)
        } catch let error as CLIError {
            throw error
        } catch {
            throw .unreachable(url: connection.displayURL, reason: Self.reason(error, timeout: connection.requestTimeout))
        }
    }

    /// Sends a request and returns a 2xx answer; anything else throws.
    func send(
        _ method: String,
        _ path: String,
        query: [String: String] = [:],
        body: Data?,
        _ credentials: Credentials
    ) async throws(CLIError) -> Response {
        let url = try makeURL(path, query: query)
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: connection.requestTimeout)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue("heraldctl/\(HeraldCtl.version)", forHTTPHeaderField: "User-Agent")
        request.setValue(try authorization(credentials), forHTTPHeaderField: "Authorization")
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = body
        }

        let data: Data
        let response: HTTPURLResponse
        do {
            (data, response) = try await HTTPExchange.perform(request, configuration: sessionConfiguration)
        } catch {
            throw .unreachable(url: connection.displayURL, reason: Self.reason(error, timeout: connection.requestTimeout))
        }
        return try answer(data, response)
    }

    /// A 2xx answer; an error answer as the API's error, anything else as not Herald's API.
    private func answer(_ data: Data, _ response: HTTPURLResponse) throws(CLIError) -> Response {
        let status = response.statusCode
        if (200..<300).contains(status) { return Response(status: status, body: data) }
        if let answer = try? JSONDecoder().decode(ErrorBody.self, from: data) {
            throw .api(status: status, code: answer.error.code, message: answer.error.message)
        }
        throw .unexpectedResponse(status: status, url: connection.displayURL)
    }

    /// `path` is already percent-encoded (see `segment(_:)`); the base URL may carry a
    /// path prefix of its own (a reverse proxy's).
    private func makeURL(_ path: String, query: [String: String]) throws(CLIError) -> URL {
        var base = connection.url.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        var text = base + path
        if !query.isEmpty {
            text += "?" + query.sorted { $0.key < $1.key }.map { "\(Self.segment($0.key))=\(Self.segment($0.value))" }.joined(separator: "&")
        }
        guard let url = URL(string: text) else { throw .usage("cannot build a URL for \(path)") }
        return url
    }

    private func authorization(_ credentials: Credentials) throws(CLIError) -> String {
        switch credentials {
        case .admin:
            guard let token = connection.adminToken?.value else {
                throw .configuration("no admin token: pass --admin-token, set HERALD_ADMIN_TOKEN, or add admin_token to a profile")
            }
            return "Bearer \(token)"
        case .app:
            guard let appKey = connection.appKey?.value else {
                throw .configuration("no app key: pass --app-key, set HERALD_APP_KEY, or add app_key to a profile")
            }
            guard let secret = connection.masterSecret?.value else {
                throw .configuration("no master secret: set HERALD_MASTER_SECRET, pass --master-secret, or add master_secret to a profile")
            }
            return "Basic " + Data("\(appKey):\(secret)".utf8).base64EncodedString()
        }
    }

    /// One path segment or query value, percent-encoded (tags and aliases may hold any
    /// printable character, `/` and `?` included).
    static func segment(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// Why a request got no answer, in words (never including the request itself).
    private static func reason(_ error: any Error, timeout: Double) -> String {
        guard let error = error as? URLError else { return "the request failed" }
        switch error.code {
        case .cannotConnectToHost: return "connection refused"
        case .cannotFindHost, .dnsLookupFailed: return "unknown host"
        case .timedOut: return "no answer within \(Self.seconds(timeout))"
        case .networkConnectionLost: return "the connection was closed before an answer"
        case .notConnectedToInternet: return "no network"
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
            .serverCertificateHasUnknownRoot:
            return "TLS failed (\(error.code.rawValue))"
        case .unsupportedURL: return "unsupported URL"
        default: return "network error \(error.code.rawValue)"
        }
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}

/// `{"error": {"code": 9102, "message": "registration_id: no device … in this app"}}`
private struct ErrorBody: Decodable {
    struct Detail: Decodable {
        var code: Int
        var message: String
    }
    var error: Detail
}
