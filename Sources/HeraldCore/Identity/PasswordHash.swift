import Crypto
import Foundation
import _CryptoExtras

/// People's passwords, stored as scrypt hashes: unlike the secrets Herald generates
/// (``SecretHash``), a password a person chose has little entropy, so every guess must
/// cost time and memory. Stored as `scrypt$<log2 N>$<r>$<p>$<salt>$<hash>` (base64), so the
/// cost can be raised later and old hashes still verify.
public struct PasswordHash: Sendable, Hashable {
    /// log2 of scrypt's N, its block size r and parallelism p.
    public var logN: Int
    public var blockSize: Int
    public var parallelism: Int

    /// 2^15 × 8 × 128 bytes: 32 MiB and about 0.1 s per hash on one core (OWASP's
    /// minimum for scrypt is 2^17 with r = 8, p = 1 at 128 MiB; 32 MiB keeps sign-ins
    /// of a few people at once within a small node's memory).
    public static let standard = PasswordHash(logN: 15, blockSize: 8, parallelism: 1)

    /// Passwords shorter than this are refused.
    public static let minimumLength = 10

    public init(logN: Int, blockSize: Int, parallelism: Int) {
        self.logN = logN
        self.blockSize = blockSize
        self.parallelism = parallelism
    }

    /// The stored text for `password`, with a fresh salt.
    public func hash(_ password: String) throws -> String {
        var salt = [UInt8](repeating: 0, count: 16)
        var generator = SystemRandomNumberGenerator()
        for index in salt.indices { salt[index] = generator.next() }
        let derived = try derive(password, salt: salt)
        return "scrypt$\(logN)$\(blockSize)$\(parallelism)$\(Data(salt).base64EncodedString())$\(Data(derived).base64EncodedString())"
    }

    /// Whether `password` is the one `stored` was made from (constant-time comparison).
    /// A malformed stored text matches nothing.
    public static func verify(_ password: String, stored: String) -> Bool {
        let parts = stored.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0] == "scrypt", let logN = Int(parts[1]), let r = Int(parts[2]), let p = Int(parts[3]),
            (1...20).contains(logN), (1...32).contains(r), (1...16).contains(p),
            let salt = Data(base64Encoded: String(parts[4])), let expected = Data(base64Encoded: String(parts[5])), expected.count == 32,
            let derived = try? PasswordHash(logN: logN, blockSize: r, parallelism: p).derive(password, salt: Array(salt))
        else { return false }
        return SecretHash.equal(derived, expected)
    }

    /// Spends the time of one verification without a stored hash: a sign-in for an unknown
    /// email takes as long as one with a wrong password.
    public static func spendVerification(_ password: String) {
        _ = try? standard.derive(password, salt: Array(repeating: 0, count: 16))
    }

    private func derive(_ password: String, salt: [UInt8]) throws -> [UInt8] {
        let key = try KDF.Scrypt.deriveKey(
            from: Array(password.utf8),
            salt: salt,
            outputByteCount: 32,
            rounds: 1 << logN,
            blockSize: blockSize,
            parallelism: parallelism
        )
        return key.withUnsafeBytes { Array($0) }
    }
}
