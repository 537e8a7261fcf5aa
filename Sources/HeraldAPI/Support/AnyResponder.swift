import Hummingbird

/// A responder of Herald's context, whichever wrappers it has.
struct AnyResponder: HTTPResponder {
    private let respond: @Sendable (Request, HeraldRequestContext) async throws -> Response

    init<Inner: HTTPResponder>(_ inner: Inner) where Inner.Context == HeraldRequestContext {
        self.respond = inner.respond(to:context:)
    }

    func respond(to request: Request, context: HeraldRequestContext) async throws -> Response {
        try await respond(request, context)
    }
}
