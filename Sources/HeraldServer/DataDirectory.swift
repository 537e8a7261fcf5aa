import Foundation
import HeraldCore

/// Herald's data directory: the embedded cluster and the secrets Herald generates when
/// configuration doesn't provide them (files readable by the owner only).
struct DataDirectory {
    let path: String

    init(path: String) throws {
        self.path = URL(fileURLWithPath: path).standardizedFileURL.path
        do {
            try FileManager.default.createDirectory(atPath: self.path, withIntermediateDirectories: true)
            // The embedded cluster runs as another user and must be able to reach its directory.
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: self.path)
        } catch {
            throw StartupError("cannot create data directory \(self.path): \(error.localizedDescription)")
        }
    }

    var postgresDirectory: String { path + "/postgres" }
    var adminTokenFile: String { path + "/admin-token" }
    var keyEncryptionKeyFile: String { path + "/key-encryption-key" }

    /// The secret stored in `file`, generating it with `generate` the first time.
    func secret(_ file: String, generate: () -> String) throws -> String {
        if let stored = try? String(contentsOfFile: file, encoding: .utf8) {
            let trimmed = stored.trimmingCharacters(in: .whitespacesAndNewlines)
            if !trimmed.isEmpty { return trimmed }
        }
        let value = generate()
        guard FileManager.default.createFile(atPath: file, contents: Data((value + "\n").utf8), attributes: [.posixPermissions: 0o600]) else {
            throw StartupError("cannot write \(file)")
        }
        return value
    }
}
