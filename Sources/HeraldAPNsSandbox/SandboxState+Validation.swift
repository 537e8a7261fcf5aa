import Foundation
import HeraldCore

/// A request that passed every check, with its headers parsed.
struct ValidatedRequest: Sendable {
    var apnsID: UUID
    var deviceToken: String
    var topic: String?
    var pushType: String
    var priority: Int
    var expiration: Int?
    var collapseID: String?
    var headers: [String: String]
    var providerToken: String?
    var payload: [UInt8]
}

extension SandboxState {
    static let pushTypes: Set<String> = [
        "alert", "background", "voip", "complication", "fileprovider", "mdm", "liveactivity", "location", "pushtotalk",
        "widgets", "controls",
    ]

    /// Apple's checks in the order a well-known mock server applies them (see apns.md).
    mutating func validate(
        _ request: SandboxRequest,
        connection: inout SandboxConnectionAuth,
        now: Date
    ) -> Result<ValidatedRequest, SandboxResponse> {
        // APNs makes up an apns-id only when the request has none.
        var apnsID: UUID?
        func reject(_ status: Int, _ reason: String, timestamp: Int64? = nil) -> Result<ValidatedRequest, SandboxResponse> {
            .failure(SandboxResponse(status: status, apnsID: apnsID ?? .random(), reason: reason, timestamp: timestamp))
        }

        if let value = request.header("apns-id") {
            guard request.count(of: "apns-id") == 1, let id = UUID(canonical: value) else { return reject(400, "BadMessageId") }
            apnsID = id
        }
        if request.hasDuplicateHeaders { return reject(400, "DuplicateHeaders") }
        guard request.method == "POST" else { return reject(405, "MethodNotAllowed") }
        let topic = request.header("apns-topic")
        let usesCertificate = connection.clientCertificateDER != nil
        if topic == nil && !usesCertificate { return reject(400, "MissingTopic") }
        let collapseID = request.header("apns-collapse-id")
        if let collapseID, collapseID.utf8.count > 64 { return reject(400, "BadCollapseId") }
        var priority = 10
        if let value = request.header("apns-priority") {
            guard let parsed = Int(value), [10, 5, 1].contains(parsed) else { return reject(400, "BadPriority") }
            priority = parsed
        }
        guard let pushType = request.header("apns-push-type"), Self.pushTypes.contains(pushType) else {
            return reject(400, "InvalidPushType")
        }
        if pushType == "background" && priority == 10 { return reject(400, "BadPriority") }
        if pushType == "voip", let topic, !topic.hasSuffix(".voip") { return reject(400, "BadTopic") }
        if let reason = Self.liveActivityTopicRejection(pushType: pushType, topic: topic) { return reject(400, reason) }
        var expiration: Int?
        if let value = request.header("apns-expiration") {
            guard let parsed = Int(value), parsed >= 0 else { return reject(400, "BadExpirationDate") }
            expiration = parsed
        }

        guard let deviceToken = Self.deviceToken(inPath: request.path) else { return reject(404, "BadPath") }
        if deviceToken.isEmpty { return reject(400, "MissingDeviceToken") }
        guard let token = Self.lowercaseHexToken(deviceToken) else { return reject(400, "BadDeviceToken") }
        if let since = unregistered[token] {
            return reject(410, "Unregistered", timestamp: Int64((since.timeIntervalSince1970 * 1000).rounded()))
        }
        if let registeredTopic = deviceTopics[token], let topic, registeredTopic != Self.bundleID(ofTopic: topic) {
            return reject(400, "DeviceTokenNotForTopic")
        }
        if deviceTopics[token] != nil, (liveActivityTokens[token] != nil) != (pushType == "liveactivity") {
            return reject(400, "DeviceTokenNotForTopic")
        }
        if let environment, let issuedIn = deviceEnvironments[token], issuedIn != environment {
            return reject(400, "BadDeviceToken")
        }

        var providerToken: String?
        if !usesCertificate {
            guard let authorization = request.header("authorization"), let jwt = Self.bearerToken(authorization) else {
                return reject(403, "MissingProviderToken")
            }
            let parsed: SandboxProviderToken
            if connection.currentToken == jwt, let current = connection.currentParsedToken {
                // The connection's token again: the common case, one comparison.
                parsed = current
            } else if let verified = verifiedTokens[jwt] {
                parsed = verified
            } else {
                do {
                    parsed = try SandboxProviderToken(jwt: jwt, keys: keys)
                } catch {
                    return reject(403, "InvalidProviderToken")
                }
                if verifiedTokens.count >= 1024 { verifiedTokens.removeAll() }
                verifiedTokens[jwt] = parsed
            }
            if let pinned = connection.pinnedTeamID, pinned != parsed.teamID { return reject(403, "UnrelatedKeyIdInToken") }
            if now.timeIntervalSince(parsed.issuedAt) > tokenLifetime { return reject(403, "ExpiredProviderToken") }
            if let current = connection.currentToken, current != jwt {
                if let since = connection.currentTokenSince, now.timeIntervalSince(since) < minimumTokenChangeInterval {
                    return reject(429, "TooManyProviderTokenUpdates")
                }
                connection.currentToken = jwt
                connection.currentTokenSince = now
            } else if connection.currentToken == nil {
                connection.currentToken = jwt
                connection.currentTokenSince = now
            }
            connection.pinnedTeamID = parsed.teamID
            connection.currentParsedToken = parsed
            providerToken = jwt
        }

        if request.body.isEmpty { return reject(400, "PayloadEmpty") }
        if request.body.count > (pushType == "voip" ? 5120 : 4096) { return reject(413, "PayloadTooLarge") }
        if pushType == "liveactivity", let reason = liveActivityPayloadRejection(request.body, token: token) { return reject(400, reason) }

        var headers: [String: String] = [:]
        headers.reserveCapacity(request.headers.count)
        for (name, value) in request.headers where name != "authorization" {
            headers[name] = value
        }
        return .success(
            ValidatedRequest(
                apnsID: apnsID ?? .random(),
                deviceToken: token,
                topic: topic,
                pushType: pushType,
                priority: priority,
                expiration: expiration,
                collapseID: collapseID,
                headers: headers,
                providerToken: providerToken,
                payload: request.body
            )
        )
    }

    /// The device token in lowercase if it is an even number of hex digits, else nil.
    static func lowercaseHexToken(_ token: String) -> String? {
        var hasUppercase = false
        var count = 0
        for byte in token.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): break
            case UInt8(ascii: "A")...UInt8(ascii: "F"): hasUppercase = true
            default: return nil
            }
            count += 1
        }
        guard count % 2 == 0 else { return nil }
        return hasUppercase ? token.lowercased() : token
    }

    /// The token of an `authorization: bearer <token>` value (the scheme in any case).
    static func bearerToken(_ authorization: String) -> String? {
        let scheme = "bearer ".utf8
        let value = authorization.utf8
        guard value.count > scheme.count,
            value.prefix(scheme.count).elementsEqual(scheme, by: { $0 == $1 || ($1 != UInt8(ascii: " ") && $0 | 0x20 == $1) })
        else { return nil }
        return String(authorization.utf8.dropFirst(scheme.count))
    }
}
