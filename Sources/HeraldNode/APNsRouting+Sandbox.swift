import HeraldAPNs
import HeraldAPNsSandbox
import HeraldCore
import HeraldStore

extension APNsRouting {
    /// Every environment's APNs traffic to `sandbox` on this machine, as `herald serve`,
    /// the benchmarks and the tests run it: each app's credentials are admitted (a token
    /// key registered, a client certificate trusted) before they are used.
    public static func localSandbox(_ sandbox: APNsSandbox) -> APNsRouting {
        let transport: APNsClient.Configuration.Transport =
            if let certificate = sandbox.certificatePEM { .tlsTrusting(certificatePEMs: [certificate]) } else { .plaintext }
        return .sandbox(
            SandboxTarget(host: "127.0.0.1", port: sandbox.port, transport: transport) { credentials in
                switch credentials.auth {
                case .token(let keyID, let teamID, let privateKeyPEM):
                    try sandbox.registerSigningKey(keyID: keyID, teamID: teamID, privateKeyPEM: privateKeyPEM)
                case .certificate(let certificatePEM, _):
                    try sandbox.trustClientCertificate(pem: certificatePEM)
                }
            }
        )
    }
}

/// The APNs channel's store is the store's APNs facade, as it is.
extension APNsStore: APNsChannelStore {}
