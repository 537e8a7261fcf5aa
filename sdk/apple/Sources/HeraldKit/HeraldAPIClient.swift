import Foundation

/// The few HTTP calls a device makes: register, its tokens, alias, tags, mobile number,
/// badge, language and zone, Live Activity tokens, receipts.
///
/// On Apple platforms through `URLSession`; on Linux through ``HTTPExchange`` (SwiftNIO),
/// as FoundationNetworking's `URLSession` can deadlock there.
public struct HeraldAPIClient: Sendable {
    public let baseURL: URL
    public let appKey: String
    #if canImport(FoundationNetworking)
    public init(baseURL: URL, appKey: String) {
        self.baseURL = baseURL
        self.appKey = appKey
    }
    #else
    private let session: URLSession

    public init(baseURL: URL, appKey: String, session: URLSession = .shared) {
        self.baseURL = baseURL
        self.appKey = appKey
        self.session = session
    }
    #endif

    /// Registers this installation and returns its new credentials.
    ///
    /// - Parameters:
    ///   - existing: the credentials this installation already holds, if any: its
    ///     registration is kept (with a new secret). Without them Herald makes a new
    ///     registration, and a token in the request moves to it from any other device.
    ///   - timeZone: the device's IANA time zone, for pushes scheduled in each device's
    ///     local time; the system's zone unless told otherwise (nil sends none).
    ///   - language: the device's BCP 47 language, which chooses a push's content per
    ///     language; the user's first preferred language unless told otherwise (nil, or a
    ///     value that isn't a language tag, sends none).
    public func register(
        platform: String,
        apnsToken: String? = nil,
        apnsEnvironment: String? = nil,
        timeZone: String? = TimeZone.current.identifier,
        language: String? = Locale.preferredLanguages.first,
        existing: DeviceCredentials? = nil
    ) async throws -> DeviceCredentials {
        var body: [String: String] = ["app_key": appKey, "platform": platform]
        body["apns_token"] = apnsToken
        body["apns_environment"] = apnsEnvironment
        body["time_zone"] = timeZone
        body["language"] = language.flatMap(Self.languageTag)
        let data = try await send("POST", "/v3/devices", body: body, credentials: existing)
        return try JSONDecoder().decode(DeviceCredentials.self, from: data)
    }

    /// Sets the device's alias (`""` clears it).
    public func setAlias(_ alias: String, credentials: DeviceCredentials) async throws {
        _ = try await send("POST", "/v3/devices/\(credentials.registrationID)", body: ["alias": alias], credentials: credentials)
    }

    /// `language` as a BCP 47 tag (`_` read as `-`), or nil when it isn't one (a POSIX
    /// locale such as `C`): a registration never fails for the system's language.
    static func languageTag(_ language: String) -> String? {
        let tag = language.replacingOccurrences(of: "_", with: "-")
        let subtags = tag.split(separator: "-", omittingEmptySubsequences: false)
        guard tag.utf8.count <= 35, let first = subtags.first, (2...8).contains(first.count), first.allSatisfy({ $0.isASCII && $0.isLetter }),
            subtags.dropFirst().allSatisfy({ (1...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } })
        else { return nil }
        return tag
    }

    /// Sets the device's BCP 47 language (when the user changes it).
    public func setLanguage(_ language: String, credentials: DeviceCredentials) async throws {
        _ = try await send("POST", "/v3/devices/\(credentials.registrationID)", body: ["language": language], credentials: credentials)
    }

    /// Sets the device's IANA time zone (when the device moves to another one).
    public func setTimeZone(_ timeZone: String, credentials: DeviceCredentials) async throws {
        _ = try await send("POST", "/v3/devices/\(credentials.registrationID)", body: ["time_zone": timeZone], credentials: credentials)
    }

    /// Adds and removes tags of the device.
    public func updateTags(add: [String] = [], remove: [String] = [], credentials: DeviceCredentials) async throws {
        _ = try await send(
            "POST",
            "/v3/devices/\(credentials.registrationID)",
            body: ["tags": ["add": add, "remove": remove]],
            credentials: credentials
        )
    }

    /// Sets the device's mobile number, for SMS fallback (JPush's `setMobileNumber`; `""`
    /// clears it).
    public func setMobile(_ mobile: String, credentials: DeviceCredentials) async throws {
        _ = try await send("POST", "/v3/devices/\(credentials.registrationID)", body: ["mobile": mobile], credentials: credentials)
    }

    /// Tells Herald the badge the app shows now (JPush's `setBadge`; 0 is `resetBadge`), so
    /// a push's "+1" counts from it. The app sets its icon's badge itself (the presenter's
    /// ``Presenter/setBadge(_:)``).
    public func setBadge(_ badge: Int, credentials: DeviceCredentials) async throws {
        struct Body: Encodable { var badge: Int }
        _ = try await send("POST", "/v3/devices/\(credentials.registrationID)", body: Body(badge: max(0, badge)), credentials: credentials)
    }

    /// Sets the device's APNs token (a new one after `didRegisterForRemoteNotifications`),
    /// as the bytes iOS gives; `environment` is `sandbox` for a development build.
    public func setAPNsToken(_ token: some Sequence<UInt8>, environment: String? = nil, credentials: DeviceCredentials) async throws {
        var body = ["apns_token": Self.hex(token)]
        body["apns_environment"] = environment
        _ = try await send("POST", "/v3/devices/\(credentials.registrationID)", body: body, credentials: credentials)
    }

    /// Sets the device's PushKit VoIP token.
    public func setVoIPToken(_ token: some Sequence<UInt8>, credentials: DeviceCredentials) async throws {
        _ = try await send("POST", "/v3/devices/\(credentials.registrationID)", body: ["voip_token": Self.hex(token)], credentials: credentials)
    }

    /// Sets the push-to-start token of a Live Activity attributes type (ActivityKit's
    /// `pushToStartTokenUpdates`): a `live_activity` start push goes to it.
    public func setLiveActivityPushToStartToken(
        _ token: some Sequence<UInt8>,
        attributesType: String,
        credentials: DeviceCredentials
    ) async throws {
        let path = "/v3/devices/\(credentials.registrationID)/live_activities/push_to_start/\(Self.pathSegment(attributesType))"
        _ = try await send("PUT", path, body: ["token": Self.hex(token)], credentials: credentials)
    }

    /// Sets the update token of a running Live Activity (its `pushTokenUpdates`), under the
    /// id the app's server names it by (`audience.live_activity_id`); nil removes it when
    /// the activity ends.
    public func setLiveActivityToken(_ token: [UInt8]?, activityID: String, credentials: DeviceCredentials) async throws {
        let path = "/v3/devices/\(credentials.registrationID)/live_activities/\(Self.pathSegment(activityID))"
        if let token {
            _ = try await send("PUT", path, body: ["token": Self.hex(token)], credentials: credentials)
        } else {
            _ = try await send("DELETE", path, body: [String: String](), credentials: credentials)
        }
    }

    /// A token as Herald takes it: lowercase hex.
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// `text` as one path segment: everything but unreserved characters percent-encoded.
    static func pathSegment(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// Reports receipts (``ReceiptQueue/flush(_:)`` calls this): at most 100 at a time.
    /// Returns how many named a message this device was sent.
    @discardableResult
    public func sendReceipts(_ receipts: [Receipt], credentials: DeviceCredentials) async throws -> Int {
        struct Body: Encodable { var receipts: [Receipt] }
        struct Answer: Decodable { var recorded: Int }
        let data = try await send(
            "POST",
            "/v3/devices/\(credentials.registrationID)/receipts",
            body: Body(receipts: receipts),
            credentials: credentials
        )
        return try JSONDecoder().decode(Answer.self, from: data).recorded
    }

    private func send(_ method: String, _ path: String, body: some Encodable, credentials: DeviceCredentials?) async throws -> Data {
        // `path` is already escaped (``pathSegment(_:)``): appended as it is.
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        guard let url = URL(string: base + path) else { throw HeraldClientError("not a URL: \(base + path)") }
        var headers = [("Content-Type", "application/json")]
        if let credentials {
            let basic = Data("\(credentials.registrationID):\(credentials.deviceSecret)".utf8).base64EncodedString()
            headers.append(("Authorization", "Basic \(basic)"))
        }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let encoded = try encoder.encode(body)
        #if canImport(FoundationNetworking)
        let answer = try await HTTPExchange.send(method, url, headers: headers, body: encoded, timeout: .seconds(30))
        let (status, data) = (answer.status, answer.body)
        #else
        var request = URLRequest(url: url, timeoutInterval: 30)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = encoded
        let (data, response) = try await session.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        #endif
        guard (200..<300).contains(status) else {
            throw HeraldClientError("\(method) \(path) failed: \(String(decoding: data, as: UTF8.self))")
        }
        return data
    }
}
