import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird

/// Registers a route on the router and records it in the ``RouteTable``.
struct RouteRegistrar {
    let router: Router<HeraldRequestContext>
    var table: RouteTable
    /// Where changes go in the audit log (nil: no audit, a benchmark's choice).
    var audit: AuditRecorder? = nil

    /// Registers a route with who may call it: the handler runs with
    /// ``RouteAccess/serving`` set, which ``Authentication`` checks credentials against.
    /// A change (any method but GET) through a route that takes credentials is written to
    /// the audit log before it is answered, refused or not, as is a refused GET that
    /// carried credentials, and every sign-in; a device acting on its own registration is not. `confirm`: a
    /// destructive route, which a person calls only with their password confirmed lately.
    mutating func on<Output: ResponseGenerator>(
        _ method: HTTPRequest.Method,
        _ path: String,
        access: RouteAccess,
        confirm: Bool = false,
        use handler: @escaping @Sendable (Request, HeraldRequestContext) async throws -> Output
    ) {
        table.add(method, path, access: access, confirm: confirm)
        let audit = access == .open ? nil : audit
        router.on(RouterPath(path), method: method) { request, context -> Response in
            let address = context.remoteAddress.flatMap(\.ipAddress).flatMap(IPAddress.init)
            let serving = RouteAccess.Serving(
                access: access,
                remoteAddress: address,
                audit: audit.map { _ in
                    RequestAudit(action: "\(method.rawValue) \(path)", target: request.uri.path, address: address?.description, requestID: context.id)
                },
                confirm: confirm
            )
            let response: Response
            do {
                response = try await RouteAccess.$serving.withValue(serving) {
                    try await handler(request, context).response(from: request, context: context)
                }
            } catch {
                let status = (error as? HeraldError)?.code.httpStatus ?? (error as? any HTTPResponseError)?.status.code ?? 500
                try await Self.audit(audit, serving, request, context, method: method, path: path, status: status)
                throw error
            }
            try await Self.audit(audit, serving, request, context, method: method, path: path, status: response.status.code)
            return response
        }
    }

    private static func audit(
        _ recorder: AuditRecorder?,
        _ serving: RouteAccess.Serving,
        _ request: Request,
        _ context: HeraldRequestContext,
        method: HTTPRequest.Method,
        path: String,
        status: Int
    ) async throws {
        guard let recorder, let audit = serving.audit else { return }
        let gathered = audit.gathered
        // Written already, in the commit of the push it answers.
        if gathered.claimed, status < 300 { return }
        let refused = status == 401 || status == 403
        // A sign-in is audited whatever its method and outcome.
        let signIn = serving.access == .signIn
        guard !gathered.isDevice, signIn || method != .get || (refused && request.headers[.authorization] != nil) else { return }
        try await recorder.record(audit.entry(status: status))
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
