import Foundation

/// An app's credentials for Apple Push Notification service.
///
/// Holds secret key material: it is only ever stored sealed (see ``CredentialSealer``)
/// and never rendered into a response; ``summary`` is what operators see.
public struct APNsCredentials: Sendable, Codable, Hashable {
    /// How Herald authenticates to APNs.
    public enum Auth: Sendable, Codable, Hashable {
        /// Token-based: an ES256 key (.p8) with its key id and team id.
        case token(keyID: String, teamID: String, privateKeyPEM: String)
        /// Certificate-based: a client certificate and its private key, both PEM.
        case certificate(certificatePEM: String, privateKeyPEM: String)
    }

    public var auth: Auth
    /// The app's bundle id: the `apns-topic` of alert pushes.
    public var bundleID: String
    /// Which APNs environment the credentials are for.
    public var environment: APNsEnvironment

    public init(auth: Auth, bundleID: String, environment: APNsEnvironment) {
        self.auth = auth
        self.bundleID = bundleID
        self.environment = environment
    }

    /// What operators may see: everything but the key material.
    public var summary: APNsCredentialsSummary {
        switch auth {
        case .token(let keyID, let teamID, _):
            return APNsCredentialsSummary(type: .token, bundleID: bundleID, environment: environment, keyID: keyID, teamID: teamID)
        case .certificate(let certificatePEM, _):
            let details = try? APNsCredentialValidator.certificateDetails(certificatePEM)
            return APNsCredentialsSummary(
                type: .certificate,
                bundleID: bundleID,
                environment: environment,
                certificateSubject: details?.subject,
                certificateExpiresAt: details?.notValidAfter
            )
        }
    }
}

/// The non-secret description of an app's APNs credentials.
public struct APNsCredentialsSummary: Sendable, Codable, Hashable {
    public enum Kind: String, Sendable, Codable { case token, certificate }

    public var type: Kind
    public var bundleID: String
    public var environment: APNsEnvironment
    public var keyID: String?
    public var teamID: String?
    public var certificateSubject: String?
    public var certificateExpiresAt: Date?

    public init(
        type: Kind,
        bundleID: String,
        environment: APNsEnvironment,
        keyID: String? = nil,
        teamID: String? = nil,
        certificateSubject: String? = nil,
        certificateExpiresAt: Date? = nil
    ) {
        self.type = type
        self.bundleID = bundleID
        self.environment = environment
        self.keyID = keyID
        self.teamID = teamID
        self.certificateSubject = certificateSubject
        self.certificateExpiresAt = certificateExpiresAt
    }
}
