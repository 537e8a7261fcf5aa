import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value kept as a JSON file that several processes change (the app and its
/// Notification Service Extension, through their App Group): each change reads, changes
/// and writes it under an exclusive `flock` on a lock file beside it, and replaces the file
/// atomically. A file that is missing or doesn't parse reads as `empty`.
public struct LockedJSONFile<Value: Codable & Sendable & Equatable>: Sendable {
    public let url: URL
    public let empty: Value

    public init(url: URL, empty: Value) {
        self.url = url
        self.empty = empty
    }

    public func update<Result>(_ body: (inout Value) -> Result) throws -> Result {
        let lockPath = url.path + ".lock"
        let descriptor = open(lockPath, O_CREAT | O_RDWR, 0o600)
        guard descriptor >= 0 else { throw HeraldClientError("cannot open \(lockPath)") }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX) == 0 else { throw HeraldClientError("cannot lock \(lockPath)") }
        defer { flock(descriptor, LOCK_UN) }
        let before = (try? Data(contentsOf: url)).flatMap { try? JSONDecoder().decode(Value.self, from: $0) } ?? empty
        var value = before
        let result = body(&value)
        if value != before {
            try JSONEncoder().encode(value).write(to: url, options: .atomic)
        }
        return result
    }

    /// The value as it is now.
    public func read() throws -> Value {
        try update { $0 }
    }
}
