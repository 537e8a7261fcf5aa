import Foundation
import HTTPTypes
import HeraldCore
import Hummingbird

/// Registers a route on the router and records it in the ``RouteTable``.
struct RouteRegistrar {
    let router: Router<HeraldRequestContext>
    var table: RouteTable

    mutating func on<Output: ResponseGenerator>(
        _ method: HTTPRequest.Method,
        _ path: String,
        use handler: @escaping @Sendable (Request, HeraldRequestContext) async throws -> Output
    ) {
        table.add(method, path)
        router.on(RouterPath(path), method: method, use: handler)
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
