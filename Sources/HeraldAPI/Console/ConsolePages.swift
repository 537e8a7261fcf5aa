import CompressNIO
import Crypto
import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird
import Mustache

/// The web console's pages and files, from the binary (`console/`, embedded at build
/// time): templates rendered with Mustache (escaped by default), assets served under names
/// that carry their content's hash so they are cached for good, and every answer with the
/// console's security headers.
struct ConsolePages: Sendable {
    /// An asset as served: its bytes, type, and hashed name.
    struct Asset: Sendable {
        var name: String
        var contentType: String
        var bytes: [UInt8]
        /// The same, gzipped once when the node starts (nil if that failed).
        var gzipped: ByteBuffer?
    }

    let library: MustacheLibrary
    /// Templates that didn't parse (a build's defect, which `ConsoleTests` catches): their
    /// pages answer a plain error instead.
    let problems: [String]
    /// By hashed name (`console.3f9a0c1d.css`).
    let assets: [String: Asset]
    /// Original name (`console.css`) → its path (`/console/assets/console.3f9a0c1d.css`).
    let assetPaths: [String: String]

    /// Every page and answer of the console carries these: no script but Herald's own, no
    /// framing, no sniffing, nothing kept by caches.
    static let securityHeaders: HTTPFields = [
        .contentSecurityPolicy:
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'",
        HTTPField.Name("X-Frame-Options")!: "DENY",
        HTTPField.Name("X-Content-Type-Options")!: "nosniff",
        HTTPField.Name("Referrer-Policy")!: "same-origin",
    ]

    init() {
        var library = MustacheLibrary()
        var problems: [String] = []
        for (name, text) in EmbeddedConsole.templates {
            do { try library.register(text, named: name) } catch { problems.append("\(name): \(error)") }
        }
        self.library = library
        self.problems = problems
        var assets: [String: Asset] = [:]
        var paths: [String: String] = [:]
        for (name, text) in EmbeddedConsole.assets {
            let bytes = Array(text.utf8)
            let hash = Hex.encode(SHA256.hash(data: bytes).prefix(6))
            let dot = name.lastIndex(of: ".") ?? name.endIndex
            let hashed = "\(name[..<dot]).\(hash)\(name[dot...])"
            let type =
                name.hasSuffix(".css")
                ? "text/css; charset=utf-8" : name.hasSuffix(".js") ? "text/javascript; charset=utf-8" : "application/octet-stream"
            var plain = ByteBuffer(bytes: bytes)
            let gzipped = try? plain.compress(with: .gzip())
            assets[hashed] = Asset(name: hashed, contentType: type, bytes: bytes, gzipped: gzipped)
            paths[name] = "/console/assets/\(hashed)"
        }
        self.assets = assets
        self.assetPaths = paths
    }

    /// A page: `template` rendered with `values` (and the layout's own: the assets, the
    /// signed-in person and their CSRF token).
    func page(
        _ template: String,
        title: String,
        _ values: [String: Any] = [:],
        person: ConsoleSession? = nil,
        status: HTTPResponse.Status = .ok
    ) -> Response {
        var context = Self.withoutNils(values)
        context["title"] = title
        context["assets"] = ["css": assetPaths["console.css"] ?? "", "js": assetPaths["console.js"] ?? ""]
        if let person { context["person"] = ["email": person.signedIn.person.email, "csrf": person.csrf] }
        let html = library.render(context, withTemplate: template) ?? "<!DOCTYPE html><title>Herald</title><p>Missing page.</p>"
        var headers = Self.securityHeaders
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// The values with every nil left out, however deep: Mustache would show a nil as
    /// "nil" and take it for true in a section.
    static func withoutNils(_ values: [String: Any]) -> [String: Any] {
        values.compactMapValues(present)
    }

    private static func present(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            guard let wrapped = mirror.children.first?.value else { return nil }
            return present(wrapped)
        }
        if let dictionary = value as? [String: Any] { return withoutNils(dictionary) }
        if let array = value as? [Any] { return array.compactMap(present) }
        return value
    }

    /// A redirect after a form (303: the browser GETs the target).
    static func redirect(to location: String, cookie: String? = nil) -> Response {
        var headers = securityHeaders
        headers[.location] = location
        headers[.cacheControl] = "no-store"
        if let cookie { headers[.setCookie] = cookie }
        return Response(status: .seeOther, headers: headers)
    }

    /// An asset by its hashed name; cached for a year (a new content is a new name), and
    /// gzipped for a browser that takes it.
    func asset(_ name: String, acceptEncoding: String? = nil) -> Response? {
        guard let asset = assets[name] else { return nil }
        var headers = Self.securityHeaders
        headers[.contentType] = asset.contentType
        headers[.cacheControl] = "public, max-age=31536000, immutable"
        headers[.vary] = "Accept-Encoding"
        if let gzipped = asset.gzipped, Self.acceptsGzip(acceptEncoding) {
            headers[.contentEncoding] = "gzip"
            headers[.contentLength] = String(gzipped.readableBytes)
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: gzipped))
        }
        headers[.contentLength] = String(asset.bytes.count)
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: asset.bytes)))
    }

    /// Whether an `Accept-Encoding` takes gzip (not refused with `q=0`).
    static func acceptsGzip(_ header: String?) -> Bool {
        guard let header else { return false }
        return header.split(separator: ",").contains { entry in
            let parts = entry.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard parts.first == "gzip" || parts.first == "*" else { return false }
            return !parts.dropFirst().contains { $0.replacingOccurrences(of: " ", with: "").hasPrefix("q=0") && !$0.contains("q=0.") }
        }
    }
}
