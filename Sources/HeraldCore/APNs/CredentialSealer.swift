import Crypto
import Foundation

/// Seals secrets at rest with AES-256-GCM under a key-encryption key from configuration.
///
/// The sealed form carries the id of the key that sealed it, so a node configured with a
/// different key reports that clearly instead of failing authentication.
public struct CredentialSealer: Sendable {
    private let keyBytes: [UInt8]
    private var key: SymmetricKey { SymmetricKey(data: keyBytes) }
    /// The first 8 bytes of SHA-256 of the key, hex: identifies the key without revealing it.
    public let keyID: String

    /// A sealer for a 32-byte key.
    public init(keyBytes: [UInt8]) throws(HeraldError) {
        guard keyBytes.count == 32 else {
            throw HeraldError(.invalidField, "key encryption key: must be 32 bytes (base64 of 32 random bytes)")
        }
        self.keyBytes = keyBytes
        self.keyID = Hex.encode(SHA256.hash(data: keyBytes).prefix(8))
    }

    /// A sealer for a base64-encoded 32-byte key, as configured.
    public init(base64Key: String) throws(HeraldError) {
        guard let data = Data(base64Encoded: base64Key.trimmingWhitespace()) else {
            throw HeraldError(.invalidField, "key encryption key: not base64")
        }
        try self.init(keyBytes: Array(data))
    }

    /// A new random key, base64-encoded, for a data directory that has none.
    public static func generateBase64Key() -> String {
        SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
    }

    /// Seals `plaintext`, binding it to `context` (e.g. the app key) as authenticated data,
    /// so a sealed value can't be moved to another app.
    public func seal(_ plaintext: [UInt8], context: String) throws -> SealedSecret {
        let box = try AES.GCM.seal(plaintext, using: key, authenticating: Array(context.utf8))
        return SealedSecret(keyID: keyID, combined: Array(box.combined!))
    }

    /// Opens a sealed value.
    public func open(_ sealed: SealedSecret, context: String) throws(CredentialSealerError) -> [UInt8] {
        guard sealed.keyID == keyID else { throw .wrongKey(sealedWith: sealed.keyID, configured: keyID) }
        do {
            let box = try AES.GCM.SealedBox(combined: sealed.combined)
            return Array(try AES.GCM.open(box, using: key, authenticating: Array(context.utf8)))
        } catch {
            throw .corrupt
        }
    }
}

/// A secret sealed by ``CredentialSealer``: nonce, ciphertext and tag, with the sealing key's id.
public struct SealedSecret: Sendable, Hashable {
    public var keyID: String
    public var combined: [UInt8]

    public init(keyID: String, combined: [UInt8]) {
        self.keyID = keyID
        self.combined = combined
    }
}

/// Why a sealed secret could not be opened.
public enum CredentialSealerError: Error, Hashable, CustomStringConvertible {
    case wrongKey(sealedWith: String, configured: String)
    case corrupt

    public var description: String {
        switch self {
        case .wrongKey(let sealedWith, let configured):
            "sealed with key-encryption key \(sealedWith), but the configured key is \(configured)"
        case .corrupt:
            "sealed secret failed authentication (corrupt or tampered)"
        }
    }
}
