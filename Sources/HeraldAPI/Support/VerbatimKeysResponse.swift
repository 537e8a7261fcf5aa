import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// A JSON answer whose object keys are data (cids, registration ids), written as given:
/// the context's encoder turns keys to snake case, so a client's cid `retryA` would come
/// back as `retry_a`. Its values name their own keys (explicit `CodingKeys`).
struct VerbatimKeysResponse<Value: Encodable>: ResponseGenerator {
    var value: Value

    init(_ value: Value) { self.value = value }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let data = try Self.encoder.encode(value)
        return Response(
            status: .ok,
            headers: [.contentType: "application/json; charset=utf-8", .contentLength: String(data.count)],
            body: .init(byteBuffer: ByteBuffer(bytes: data))
        )
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
