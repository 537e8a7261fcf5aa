import Foundation
import HTTPTypes
import HeraldCore
import Hummingbird
import NIOCore

/// Reads a JSON request body with a size limit and turns every decoding failure into a
/// ``HeraldError`` that names the field.
struct JSONBody: Sendable {
    let maxSize: Int

    func decode<Value: Decodable>(_ type: Value.Type, from request: Request) async throws -> Value {
        if let contentType = request.headers[.contentType] {
            let mediaType = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard mediaType == "application/json" else {
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
        guard buffer.readableBytes > 0 else {
            throw HeraldError(.invalidJSON, "body: expected a JSON object")
        }
        do {
            return try JSONDecoder().decode(Value.self, from: Data(buffer.readableBytesView))
        } catch let error as DecodingError {
            throw Self.translate(error)
        }
    }

    static func translate(_ error: DecodingError) -> HeraldError {
        switch error {
        case .keyNotFound(let key, let context):
            return .invalidField(path(context.codingPath + [key]), "is required")
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
        var result = ""
        for key in codingPath {
            if let index = key.intValue {
                result += "[\(index)]"
            } else {
                result += result.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return result.isEmpty ? "body" : result
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

/// A key of any name, to see which keys an object really has.
struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) {
        self.stringValue = "\(intValue)"
        self.intValue = intValue
    }
}

extension Decoder {
    /// Rejects keys the request type doesn't know, so a typo (`"tag"` for `"tags"`) is an
    /// error instead of a silently ignored field.
    func rejectUnknownKeys<Keys: CodingKey & CaseIterable>(_ keys: Keys.Type) throws {
        let container = try container(keyedBy: AnyCodingKey.self)
        let known = Set(Keys.allCases.map(\.stringValue))
        if let unknown = container.allKeys.first(where: { !known.contains($0.stringValue) }) {
            let field = JSONBody.path(codingPath + [unknown])
            throw HeraldError(.invalidJSON, "\(field): unknown field (expected one of \(known.sorted().joined(separator: ", ")))")
        }
    }
}
