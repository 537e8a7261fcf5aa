/// Why the schema could not be brought up to date.
public struct MigrationError: Error, Hashable, CustomStringConvertible {
    enum Base: Hashable {
        case checksumMismatch(version: Int, name: String)
        case unknownAppliedVersion(version: Int, name: String)
        case failed(version: Int, name: String, reason: String)
    }

    let base: Base

    /// An applied migration's file was edited afterwards.
    public static func checksumMismatch(version: Int, name: String) -> Self {
        .init(base: .checksumMismatch(version: version, name: name))
    }
    /// The database has a migration this build doesn't know: it was migrated by a newer Herald.
    public static func unknownAppliedVersion(version: Int, name: String) -> Self {
        .init(base: .unknownAppliedVersion(version: version, name: name))
    }
    /// A migration's SQL failed.
    public static func failed(version: Int, name: String, reason: String) -> Self {
        .init(base: .failed(version: version, name: name, reason: reason))
    }

    public var description: String {
        switch base {
        case .checksumMismatch(let version, let name):
            "migration \(version) (\(name)) was edited after it was applied; restore the file or add a new migration"
        case .unknownAppliedVersion(let version, let name):
            "the database has migration \(version) (\(name)), which this build of herald does not know; run a newer herald"
        case .failed(let version, let name, let reason):
            "migration \(version) (\(name)) failed: \(reason)"
        }
    }
}
