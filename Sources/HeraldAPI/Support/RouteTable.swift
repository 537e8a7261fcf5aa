import HTTPTypes
import HeraldCore
import NIOConcurrencyHelpers

/// Every route Herald serves, as (method, path template). The router is built from the
/// same list that answers "does this path exist with another method" (405) and that the
/// tests compare with `openapi.yaml`.
///
/// A parameter whose values have a shape (a message id, a registration id, an app key)
/// matches only values of that shape: `GET /v3/push/quotas` names no message, so it is a
/// path no route has (404), not a `DELETE /v3/push/{msg_id}` asked with the wrong method
/// (405).
public struct RouteTable: Sendable {
    public struct Route: Sendable, Hashable {
        public var method: HTTPRequest.Method
        /// The path with `{name}` parameters, as in OpenAPI.
        public var path: String
        /// Who may call it.
        public var access: RouteAccess
        /// Destructive: a person calls it only with their password confirmed lately.
        public var confirm = false
    }

    public private(set) var routes: [Route] = []

    mutating func add(_ method: HTTPRequest.Method, _ path: String, access: RouteAccess, confirm: Bool = false) {
        routes.append(Route(method: method, path: path, access: access, confirm: confirm))
    }

    /// Whether `path` matches a route registered for some other method.
    func allowsOtherMethod(path: String, than method: HTTPRequest.Method) -> Bool {
        allowedMethods(path: path).contains { $0 != method }
    }

    /// The methods of the routes `path` matches, in registration order (the `Allow` of a 405).
    ///
    /// As the router does, a literal segment wins over a parameter: `/v3/push/recall`
    /// is the recall route's path only, not also a `/v3/push/{msg_id}`.
    func allowedMethods(path: String) -> [HTTPRequest.Method] {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        var best: [Bool] = []
        var methods: [HTTPRequest.Method] = []
        for route in routes {
            let template = route.path.split(separator: "/", omittingEmptySubsequences: true)
            guard template.count == segments.count, zip(template, segments).allSatisfy(Self.matches) else { continue }
            // Which segments are literal: the router takes the first literal it can.
            let literal = template.map { !$0.hasPrefix("{") }
            if methods.isEmpty || Self.isMoreSpecific(literal, than: best) {
                best = literal
                methods = [route.method]
            } else if literal == best, !methods.contains(route.method) {
                methods.append(route.method)
            }
        }
        return methods
    }

    /// Whether a path segment fits a template segment: the same literal, or a value of the
    /// parameter's shape.
    private static func matches(_ template: Substring, _ segment: Substring) -> Bool {
        guard template.hasPrefix("{") else { return template == segment }
        let value = String(segment)
        switch template {
        case "{msg_id}": return Identifiers.isMsgID(value)
        case "{registration_id}": return Identifiers.isRegistrationID(value)
        case "{app_key}": return Identifiers.isAppKey(value)
        default: return true
        }
    }

    private static func isMoreSpecific(_ one: [Bool], than other: [Bool]) -> Bool {
        for (a, b) in zip(one, other) where a != b { return a }
        return false
    }
}

/// The route table, filled once the router is built, read by the error middleware.
final class RouteTableBox: Sendable {
    private let table = NIOLockedValueBox(RouteTable())

    func set(_ value: RouteTable) { table.withLockedValue { $0 = value } }

    func allowsOtherMethod(path: String, than method: HTTPRequest.Method) -> Bool {
        table.withLockedValue { $0 }.allowsOtherMethod(path: path, than: method)
    }

    func allowedMethods(path: String) -> [HTTPRequest.Method] {
        table.withLockedValue { $0 }.allowedMethods(path: path)
    }
}
