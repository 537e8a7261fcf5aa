import Crypto
import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird

/// A person signed in to the console: their session, from the `herald_session` cookie
/// (HttpOnly, SameSite=Strict, Secure behind TLS), and the CSRF token every form of theirs
/// carries: derived from the session's token (an HMAC), so nothing more is stored, and no
/// page of another site can know it.
struct ConsoleSession: Sendable {
    static let cookieName = "herald_session"

    var signedIn: SignedIn
    /// The form token (`_csrf`).
    var csrf: String

    init(signedIn: SignedIn, token: String) {
        self.signedIn = signedIn
        csrf = Self.csrf(for: token)
    }

    static func csrf(for token: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Array("herald-console-csrf".utf8), using: SymmetricKey(data: Array(token.utf8)))
        return Hex.encode(mac)
    }

    /// Whether `given` is the token of the session `token` opens (constant time).
    static func csrfMatches(_ given: String?, token: String) -> Bool {
        guard let given else { return false }
        return SecretHash.equal(Array(csrf(for: token).utf8), Array(given.utf8))
    }

    /// The session token the request's cookie carries, if any.
    static func token(in request: Request) -> String? {
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0] == cookieName { return String(parts[1]) }
            }
        }
        return nil
    }

    /// Whether the browser reached Herald over TLS (directly or through a proxy that says
    /// so): the cookie is then `Secure`.
    static func isSecure(_ request: Request) -> Bool {
        request.uri.scheme?.rawValue == "https" || request.headers[HTTPField.Name("X-Forwarded-Proto")!]?.lowercased() == "https"
    }

    /// The `Set-Cookie` of a session (`token`), or of its removal (nil).
    static func cookie(_ token: String?, lifetime: Duration, secure: Bool) -> String {
        let value = token ?? ""
        let age = token == nil ? 0 : lifetime.components.seconds
        return "\(cookieName)=\(value); Path=/; Max-Age=\(age); HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }

    /// A form's POST comes from a page of this site: an `Origin` (browsers send it with
    /// every POST) naming another host is refused.
    static func isSameOrigin(_ request: Request) -> Bool {
        guard let origin = request.headers[HTTPField.Name("Origin")!] else { return true }
        // HTTP/1.1's Host is the request's authority (HTTPTypes moves it there).
        guard let host = request.head.authority ?? request.headers[HTTPField.Name("Host")!] else { return false }
        return URL(string: origin).map { url in
            let port = url.port.map { ":\($0)" } ?? ""
            return (url.host ?? "") + port == host
        } ?? false
    }
}

/// An `application/x-www-form-urlencoded` body's fields.
enum FormBody {
    static let maxSize = 16 * 1024

    static func fields(_ request: Request, maxSize: Int = maxSize) async throws -> [String: String] {
        var request = request
        let buffer = try await request.collectBody(upTo: maxSize)
        var fields: [String: String] = [:]
        for pair in String(buffer: buffer).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decoded(_ text: Substring) -> String {
                text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            if let name = parts.first { fields[decoded(name)] = parts.count == 2 ? decoded(parts[1]) : "" }
        }
        return fields
    }
}
