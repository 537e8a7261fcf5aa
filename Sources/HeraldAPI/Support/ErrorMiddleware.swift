import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird
import Logging
import NIOHTTP1

/// Turns every error into Herald's JSON error shape with a stable code.
///
/// Bad input never becomes a 500; database text never reaches the client (it is logged
/// with the request id instead); a database that is down is a 503 the caller can retry.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    let routes: RouteTableBox

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            try StoredText.checkNoNUL(target: request.uri.description)
            return try await next(request, context)
        } catch let error as HTTPParserError {
            // The connection's framing is broken: the channel answers 400 and closes it.
            throw error
        } catch {
            let heraldError = translate(error, request: request, context: context)
            var response = try heraldError.response(from: request, context: context)
            switch heraldError.code {
            case .methodNotAllowed:
                response.headers[.allow] = routes.allowedMethods(path: request.uri.path).map(\.rawValue).joined(separator: ", ")
            case .payloadTooLarge where heraldError.message.hasPrefix("body:"):
                // A body over the server's limit (not a notification over its size): the
                // rest of it is not read, so the connection closes after the answer.
                response.headers[.connection] = "close"
            default:
                break
            }
            return response
        }
    }

    func translate(_ error: any Error, request: Request, context: Context) -> HeraldError {
        switch error {
        case let error as HeraldError:
            return error
        case let error as any HTTPResponseError:
            switch error.status {
            case .notFound:
                if routes.allowsOtherMethod(path: request.uri.path, than: request.method) {
                    return HeraldError(.methodNotAllowed, "\(request.method) is not allowed on \(request.uri.path)")
                }
                return HeraldError(.routeNotFound, "no route \(request.method) \(request.uri.path)")
            case .contentTooLarge:
                return HeraldError(.payloadTooLarge, "body: larger than the server accepts")
            case .unauthorized:
                return HeraldError(.unauthorized, "missing or invalid credentials")
            case .badRequest:
                return HeraldError(.invalidJSON, "malformed request")
            default:
                context.logger.error("unexpected HTTP error", metadata: ["error": "\(error)"])
                return HeraldError(.internalError, "internal error")
            }
        case _ where DatabaseFailure.isUnavailability(error):
            context.logger.error("database unavailable", metadata: ["error": "\(String(reflecting: error))"])
            return HeraldError(.unavailable, "the database is unavailable; retry later")
        default:
            context.logger.error("request failed", metadata: ["error": "\(String(reflecting: error))"])
            return HeraldError(.internalError, "internal error (request id \(context.id))")
        }
    }
}
