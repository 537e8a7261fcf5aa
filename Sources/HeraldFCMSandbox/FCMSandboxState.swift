import Foundation
import HeraldCore
import _CryptoExtras

/// What the FCM sandbox knows and took: the service accounts it admits, the access tokens
/// it issued, the messages it accepted, and the faults it is told to inject. Pure: the
/// server asks it and answers what it says.
struct FCMSandboxState {
    struct Account {
        var clientEmail: String
        var keyID: String
        var publicKeyDER: Data
        var projectID: String
        var tokenURI: String
    }

    /// An answer: HTTP status, headers, JSON body.
    struct Answer: Sendable {
        var status: Int
        var headers: [(String, String)] = []
        var body: [UInt8]
    }

    var accounts: [String: Account] = [:]
    /// Access token → (project, expiry).
    var issued: [String: (project: String, expires: Date)] = [:]
    var received: [FCMSandbox.Received] = []
    var receivedCount = 0
    var record = true
    var assertions: [String] = []
    var unregistered: Set<String> = []
    var tokenProjects: [String: String] = [:]
    var faults: [FCMSandbox.Fault] = []
    var refusedAccounts: [String: String] = [:]
    var tokenRequests = 0

    // MARK: - The token endpoint

    /// `POST /token`: the assertion checked as Google does (RFC 7523): RS256, a key the
    /// account has (`kid`), the token endpoint as audience, FCM's scope, issued now, valid
    /// an hour at most.
    mutating func token(form: String, now: Date) -> Answer {
        tokenRequests += 1
        var fields: [String: String] = [:]
        for pair in form.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        guard fields["grant_type"] == FCMAssertion.grantType else {
            return Self.grantError("unsupported_grant_type", "Invalid grant_type: \(fields["grant_type"] ?? "")")
        }
        guard let assertion = fields["assertion"] else { return Self.grantError("invalid_request", "Missing required parameter: assertion") }
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let claimBytes = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]),
            let header = try? JSONSerialization.jsonObject(with: headerBytes) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: claimBytes) as? [String: Any]
        else { return Self.grantError("invalid_grant", "Invalid JWT: not a compact JWS") }
        guard header["alg"] as? String == "RS256" else { return Self.grantError("invalid_grant", "Invalid JWT: alg must be RS256") }
        guard let issuer = claims["iss"] as? String, let account = accounts[issuer] else {
            return Self.grantError("invalid_grant", "Invalid JWT: unknown issuer")
        }
        guard header["kid"] as? String == account.keyID else {
            return Self.grantError("invalid_grant", "Invalid JWT Signature.")
        }
        guard let key = try? _RSA.Signing.PublicKey(derRepresentation: account.publicKeyDER),
            key.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature),
                for: Data("\(parts[0]).\(parts[1])".utf8),
                padding: .insecurePKCS1v1_5
            )
        else { return Self.grantError("invalid_grant", "Invalid JWT Signature.") }
        // The audience: the token endpoint, as the key file names it, or Google's, which is
        // what google-auth always writes (and what every real key file names).
        guard let audience = claims["aud"] as? String, audience == account.tokenURI || audience == FCMServiceAccount.googleTokenURI
        else {
            return Self.grantError("invalid_grant", "Invalid JWT: audience must be \(account.tokenURI)")
        }
        let scopes = (claims["scope"] as? String)?.split(separator: " ").map(String.init) ?? []
        guard scopes.contains(FCMAssertion.scope) else { return Self.grantError("invalid_scope", "Invalid OAuth scope") }
        guard let iat = (claims["iat"] as? NSNumber)?.doubleValue, let exp = (claims["exp"] as? NSNumber)?.doubleValue else {
            return Self.grantError("invalid_grant", "Invalid JWT: iat and exp are required")
        }
        let nowSeconds = now.timeIntervalSince1970
        guard iat <= nowSeconds + 60, exp > nowSeconds, exp - iat <= FCMAssertion.lifetime else {
            return Self.grantError("invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe")
        }
        if let reason = refusedAccounts[issuer] { return Self.grantError("invalid_grant", reason) }
        assertions.append(assertion)
        let token = "ya29.sandbox-" + UUID().uuidString
        issued[token] = (account.projectID, now.addingTimeInterval(3600))
        return Answer(status: 200, body: Array(#"{"access_token":"\#(token)","expires_in":3599,"token_type":"Bearer"}"#.utf8))
    }

    static func grantError(_ error: String, _ description: String) -> Answer {
        var writer = JSONObjectWriter()
        writer.field("error", error)
        writer.field("error_description", description)
        return Answer(status: 400, body: writer.finish())
    }

    // MARK: - messages:send

    /// `POST /v1/projects/{project}/messages:send`.
    mutating func send(project: String, authorization: String?, body: [UInt8], now: Date) -> Answer {
        guard let authorization, authorization.hasPrefix("Bearer "),
            let grant = issued[String(authorization.dropFirst("Bearer ".count))], grant.expires > now
        else {
            return Self.error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.", errorCode: nil)
        }
        guard grant.project == project else {
            return Self.error(403, "PERMISSION_DENIED", "Permission 'cloudmessaging.messages.create' denied on resource", errorCode: nil)
        }
        let message: FCMSandbox.ValidatedMessage
        switch FCMSandbox.validate(body, keep: record) {
        case .success(let validated): message = validated
        case .failure(let problem):
            return Self.error(400, "INVALID_ARGUMENT", problem.description, errorCode: "INVALID_ARGUMENT", field: problem.field)
        }
        if !faults.isEmpty {
            let fault = faults.removeFirst()
            var answer = Self.error(fault.status, fault.grpcStatus, "Sandbox fault", errorCode: fault.errorCode)
            if let retryAfter = fault.retryAfter { answer.headers.append(("retry-after", retryAfter)) }
            return answer
        }
        if unregistered.contains(message.token) {
            return Self.error(404, "NOT_FOUND", "Requested entity was not found.", errorCode: "UNREGISTERED")
        }
        if let owner = tokenProjects[message.token], owner != project {
            return Self.error(403, "PERMISSION_DENIED", "SenderId mismatch", errorCode: "SENDER_ID_MISMATCH")
        }
        receivedCount += 1
        let name = "projects/\(project)/messages/\(receivedCount)"
        if record {
            received.append(FCMSandbox.Received(project: project, token: message.token, message: message.message, receivedAt: now))
        }
        return Answer(status: 200, body: Array(#"{"name":"\#(name)"}"#.utf8))
    }

    static func error(_ status: Int, _ grpcStatus: String, _ message: String, errorCode: String?, field: String? = nil) -> Answer {
        var writer = JSONObjectWriter(capacity: 256)
        writer.object("error") { error in
            error.field("code", status)
            error.field("message", message)
            error.field("status", grpcStatus)
            var details: [JSONValue] = []
            if let errorCode {
                details.append(
                    .object([
                        "@type": .string("type.googleapis.com/google.firebase.fcm.v1.FcmError"), "errorCode": .string(errorCode),
                    ])
                )
            }
            if let field {
                details.append(
                    .object([
                        "@type": .string("type.googleapis.com/google.rpc.BadRequest"),
                        "fieldViolations": .array([.object(["field": .string(field), "description": .string(message)])]),
                    ])
                )
            }
            if !details.isEmpty { error.field("details", JSONValue.array(details)) }
        }
        return Answer(status: status, body: writer.finish())
    }
}
