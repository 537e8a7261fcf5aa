import Foundation
import HeraldCore

/// Mobile numbers at rest (migration 0023): sealed with the node's credential key, bound
/// to the device's app, so a sealed number moved to another app's device doesn't open.
enum MobileSealing {
    static func context(appID: Int64) -> String { "mobile:\(appID)" }

    static func seal(_ mobile: String, appID: Int64, sealer: CredentialSealer) throws -> SealedSecret {
        try sealer.seal(Array(mobile.utf8), context: context(appID: appID))
    }

    /// The number, or nil when none is sealed.
    static func open(_ combined: Data?, keyID: String?, appID: Int64, sealer: CredentialSealer) throws -> String? {
        guard let combined, let keyID else { return nil }
        let plaintext = try sealer.open(SealedSecret(keyID: keyID, combined: Array(combined)), context: context(appID: appID))
        return String(decoding: plaintext, as: UTF8.self)
    }
}
