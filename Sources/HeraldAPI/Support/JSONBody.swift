import Foundation
import HTTPTypes
import HeraldCore
import Hummingbird
import NIOCore

/// Reads a JSON request body with a size limit and turns every decoding failure into a
/// ``HeraldError`` that names the field.
struct JSONBody: Sendable {
    let maxSize: Int

    func decode<Value: Decodable>(_ type: Value.Type, from request: Request, unknownFields: UnknownFields? = nil) async throws -> Value {
        try await decode(type, from: request, unknownFields: unknownFields, fast: { _ in nil })
    }

    /// Decodes with `fast` when it reads the body, with JSONDecoder (and its errors)
    /// when it gives nil. A JPush body is decoded with `unknownFields`, which ignores (and
    /// names) the keys JPush's clients send that Herald doesn't know.
    func decode<Value: Decodable>(
        _ type: Value.Type,
        from request: Request,
        unknownFields: UnknownFields? = nil,
        fast: (UnsafeRawBufferPointer) -> Value?
    ) async throws -> Value {
        let buffer = try await bytes(of: request)
        if let value = buffer.withUnsafeReadableBytes(fast) { return value }
        // The fast readers take no escaped string, so only a body read here can hold one.
        try StoredText.checkNoNUL(buffer.readableBytesView)
        do {
            return try (unknownFields?.jsonDecoder ?? JSONDecoder()).decode(Value.self, from: Data(buffer.readableBytesView))
        } catch let error as DecodingError {
            throw Self.translate(error)
        }
    }

    /// Decodes JSON made here (the console's forms, turned into the API's bodies), with the
    /// API's errors.
    static func decode<Value: Decodable>(_ type: Value.Type, json: Data) throws -> Value {
        do {
            return try JSONDecoder().decode(Value.self, from: json)
        } catch let error as DecodingError {
            throw Self.translate(error)
        }
    }

    /// Decodes a body that may be left out: nil when the request has none.
    func decodeIfPresent<Value: Decodable>(_ type: Value.Type, from request: Request) async throws -> Value? {
        let buffer = try await bytes(of: request, allowingEmpty: true)
        guard buffer.readableBytes > 0 else { return nil }
        try StoredText.checkNoNUL(buffer.readableBytesView)
        do {
            return try JSONDecoder().decode(Value.self, from: Data(buffer.readableBytesView))
        } catch let error as DecodingError {
            throw Self.translate(error)
        }
    }

    /// The body, checked to be JSON by its media type (application/json, or JPush's form
    /// type), within the size limit and not empty; not parsed.
    func bytes(of request: Request, allowingEmpty: Bool = false) async throws -> ByteBuffer {
        // A request already answered 503 (``DatabaseWaitResponder``) leaves its body to the
        // connection, which reads it on to the next request.
        try Task.checkCancellation()
        if let contentType = request.headers[.contentType] {
            let mediaType = contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingHTTPWhitespace.lowercased() }
            // JPush's documentation sends its JSON bodies with curl -d, whose Content-Type
            // is application/x-www-form-urlencoded, and JPush reads them as JSON: so does
            // Herald (a body that isn't JSON is refused as such).
            guard mediaType == "application/json" || mediaType == "application/x-www-form-urlencoded" else {
                throw HeraldError(.unsupportedMediaType, "Content-Type: expected application/json")
            }
        }
        if let length = request.headers[.contentLength].flatMap(Int.init), length > maxSize {
            throw HeraldError(.payloadTooLarge, "body: \(length) bytes is over the limit of \(maxSize)")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: maxSize)
        } catch is NIOTooManyBytesError {
            throw HeraldError(.payloadTooLarge, "body: over the limit of \(maxSize) bytes")
        }
        guard buffer.readableBytes > 0 || allowingEmpty else {
            throw HeraldError(.invalidJSON, "body: expected a JSON object")
        }
        // What the audit log keeps of it: its digest.
        if buffer.readableBytes > 0 { RouteAccess.serving?.audit?.body(buffer.readableBytesView) }
        return buffer
    }

    static func translate(_ error: DecodingError) -> HeraldError {
        switch error {
        case .keyNotFound(let key, let context):
            return .missingField(path(context.codingPath + [key]))
        case .valueNotFound(_, let context):
            return .invalidField(path(context.codingPath), "must not be null")
        case .typeMismatch(let type, let context):
            if context.codingPath.isEmpty { return HeraldError(.invalidJSON, "body: expected a JSON object") }
            return .invalidField(path(context.codingPath), "expected \(describe(type))")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty { return HeraldError(.invalidJSON, "body: not valid JSON") }
            return .invalidField(path(context.codingPath), "invalid value")
        @unknown default:
            return HeraldError(.invalidJSON, "body: not the expected JSON")
        }
    }

    static func path(_ codingPath: [any CodingKey]) -> String {
        CodingPath.describe(codingPath)
    }

    static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "a boolean"
        case is Int.Type, is Int64.Type, is Double.Type: "a number"
        case is [String].Type, is [Any].Type: "an array"
        default: String(describing: type).hasPrefix("Array") ? "an array" : "an object"
        }
    }
}
