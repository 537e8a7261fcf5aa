import Foundation
import HTTPTypes
import HeraldCore
import Hummingbird

/// Registers a route on the router and records it in the ``RouteTable``.
struct RouteRegistrar {
    let router: Router<HeraldRequestContext>
    var table: RouteTable

    /// Registers a route with who may call it: the handler runs with
    /// ``RouteAccess/serving`` set, which ``Authentication`` checks credentials against.
    mutating func on<Output: ResponseGenerator>(
        _ method: HTTPRequest.Method,
        _ path: String,
        access: RouteAccess,
        use handler: @escaping @Sendable (Request, HeraldRequestContext) async throws -> Output
    ) {
        table.add(method, path, access: access)
        router.on(RouterPath(path), method: method) { request, context in
            let serving = RouteAccess.Serving(access: access, remoteAddress: context.remoteAddress.flatMap(\.ipAddress).flatMap(IPAddress.init))
            return try await RouteAccess.$serving.withValue(serving) { try await handler(request, context) }
        }
    }
}

extension HeraldRequestContext {
    /// A path parameter the route template guarantees, percent-decoded: a tag or alias
    /// may hold spaces, `/` or any other character a client has to escape in a path.
    func parameter(_ name: String) throws -> String {
        guard let decoded = try parameters.require(name).removingPercentEncoding else {
            throw HeraldError.invalidField(name, "is not valid percent-encoding")
        }
        return decoded
    }
}
