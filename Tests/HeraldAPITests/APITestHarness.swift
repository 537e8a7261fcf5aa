import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldNodeTesting
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import Prometheus
import Testing

/// An API test: the real application on a fresh, migrated database.
struct APITest: Sendable {
    static let adminToken = "test-admin-token-0123456789"

    let client: any TestClientProtocol
    let store: TestStores

    static func run(
        maxBodySize: Int = 1 << 20,
        apnsDestination: APNsDestination = .apple,
        apnsCheck: (@Sendable (APNsCredentials) async -> String?)? = nil,
        fcmCheck: (@Sendable (FCMServiceAccount) async -> String?)? = nil,
        _ body: @Sendable @escaping (APITest) async throws -> Void
    ) async throws {
        try await serve(.router) { configuration, _ in
            configuration.maxBodySize = maxBodySize
            configuration.apnsDestination = apnsDestination
            configuration.apnsCheck = apnsCheck
            configuration.fcmCheck = fcmCheck
        } _: { api, _ in
            try await body(api)
        }
    }

    /// The application served on a real socket (`client.port`), with the settings
    /// `configure` makes; `body` also gets the test's database.
    static func live(
        _ configure: @Sendable @escaping (inout APIConfiguration, DatabaseURL) -> Void = { _, _ in },
        _ body: @Sendable @escaping (APITest, DatabaseURL) async throws -> Void
    ) async throws {
        try await serve(.live, configure, body)
    }

    private static func serve(
        _ mode: TestingSetup,
        _ configure: @Sendable @escaping (inout APIConfiguration, DatabaseURL) -> Void,
        _ body: @Sendable @escaping (APITest, DatabaseURL) async throws -> Void
    ) async throws {
        try await TestDatabase.withDatabase { url in
            var configuration = APIConfiguration(host: "127.0.0.1", port: 0, adminToken: adminToken)
            configure(&configuration, url)
            try await TestAPI.withApplication(url, configuration: configuration) { app, store in
                try await app.test(mode) { testClient in
                    try await body(APITest(client: testClient, store: store), url)
                }
            }
        }
    }

    /// Sends a request; `json` is sent with `Content-Type: application/json`.
    @discardableResult
    func send(
        _ method: HTTPRequest.Method,
        _ uri: String,
        auth: Auth? = nil,
        json: String? = nil,
        headers: HTTPFields = [:]
    ) async throws -> Reply {
        var headers = headers
        if let auth { headers[.authorization] = auth.header }
        if json != nil, headers[.contentType] == nil { headers[.contentType] = "application/json" }
        let response = try await client.execute(uri: uri, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) })
        return Reply(status: response.status.code, body: String(buffer: response.body), headers: response.headers)
    }

    /// Creates an app through the admin API.
    func createApp(_ name: String = "Test App") async throws -> TestApp {
        let reply = try await send(.post, "/admin/v1/apps", auth: .admin, json: #"{"name": "\#(name)"}"#)
        #expect(reply.status == 201)
        return TestApp(appKey: try reply.string("app_key"), masterSecret: try reply.string("master_secret"))
    }

    /// Registers a device through the SDK endpoint.
    func registerDevice(_ app: TestApp, platform: String = "ios", apnsToken: String? = nil) async throws -> TestDevice {
        var fields = [#""app_key": "\#(app.appKey)""#, #""platform": "\#(platform)""#]
        if let apnsToken { fields.append(#""apns_token": "\#(apnsToken)""#) }
        let reply = try await send(.post, "/v3/devices", json: "{\(fields.joined(separator: ","))}")
        #expect([200, 201].contains(reply.status))
        return TestDevice(registrationID: try reply.string("registration_id"), secret: try reply.string("device_secret"))
    }
}

struct TestApp: Sendable {
    var appKey: String
    var masterSecret: String
    var auth: Auth { .basic(appKey, masterSecret) }
}

struct TestDevice: Sendable {
    var registrationID: String
    var secret: String
    var auth: Auth { .basic(registrationID, secret) }
}

enum Auth: Sendable {
    case admin
    case bearer(String)
    case basic(String, String)

    var header: String {
        switch self {
        case .admin: "Bearer \(APITest.adminToken)"
        case .bearer(let token): "Bearer \(token)"
        case .basic(let user, let password): "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        }
    }
}

struct Reply: Sendable {
    var status: Int
    var body: String
    var headers: HTTPFields

    var json: [String: Any] {
        get throws {
            guard let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] else {
                throw ReplyError("not a JSON object: \(body)")
            }
            return object
        }
    }

    func string(_ key: String) throws -> String {
        guard let value = try json[key] as? String else { throw ReplyError("no string \(key) in \(body)") }
        return value
    }

    func strings(_ key: String) throws -> [String] {
        guard let value = try json[key] as? [String] else { throw ReplyError("no string array \(key) in \(body)") }
        return value
    }

    /// The stable error code of an error reply.
    var errorCode: Int? {
        ((try? json)?["error"] as? [String: Any])?["code"] as? Int
    }

    var errorMessage: String? {
        ((try? json)?["error"] as? [String: Any])?["message"] as? String
    }
}

struct ReplyError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A registration-id-shaped id no device has.
func unknownRegistrationID() -> String { Identifiers.newRegistrationID() }

/// A 64-hex-character APNs token.
func randomAPNsToken() -> String { RandomToken.hex(byteCount: 32) }
