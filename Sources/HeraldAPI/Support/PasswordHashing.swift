import HeraldCore
import NIOPosix

/// ``PasswordHash`` off the event loops and the cooperative pool: scrypt takes about 0.1 s
/// of one core and 32 MiB, which would stall every request sharing the thread.
enum PasswordHashing {
    static func hash(_ password: String) async throws -> String {
        try await NIOThreadPool.singleton.runIfActive { try PasswordHash.standard.hash(password) }
    }

    /// Whether `password` matches `stored`; with no stored hash (an unknown email), false
    /// after as long a check.
    static func verify(_ password: String, stored: String?) async throws -> Bool {
        try await NIOThreadPool.singleton.runIfActive {
            guard let stored else {
                PasswordHash.spendVerification(password)
                return false
            }
            return PasswordHash.verify(password, stored: stored)
        }
    }
}
