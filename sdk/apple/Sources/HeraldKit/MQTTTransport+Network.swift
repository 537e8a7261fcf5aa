#if canImport(Network)
import Foundation
import HeraldMQTT
import Network
import NIOCore
import NIOTransportServices
import Security

/// The MQTT connection on Apple platforms: Network.framework through
/// NIOTransportServices, which follows the device's network (Wi-Fi to cellular) and uses
/// the system's TLS. Trusted certificates given as PEM (a private CA) replace the system's
/// roots in the verification.
enum MQTTTransport {
    static func connect(_ configuration: HeraldClient.Configuration) async throws -> NIOAsyncChannel<MQTTPacket, MQTTPacket> {
        var bootstrap = NIOTSConnectionBootstrap(group: NIOTSEventLoopGroup.singleton)
            .connectTimeout(.seconds(10))
            .channelOption(NIOTSChannelOptions.waitForActivity, value: false)
        if let tls = configuration.tls {
            bootstrap = bootstrap.tlsOptions(try tlsOptions(tls, host: configuration.host))
        }
        return try await bootstrap.connect(host: configuration.host, port: configuration.port) { channel in
            channel.eventLoop.makeCompletedFuture { try MQTTTransport.wrap(channel) }
        }
    }

    private static func tlsOptions(_ tls: HeraldClient.Configuration.TLS, host: String) throws -> NWProtocolTLS.Options {
        let options = NWProtocolTLS.Options()
        let security = options.securityProtocolOptions
        sec_protocol_options_set_tls_server_name(security, tls.serverName ?? host)
        guard let pems = tls.trustedCertificatesPEM else { return options }
        let anchors = try pems.flatMap(certificates(fromPEM:))
        sec_protocol_options_set_verify_block(
            security,
            { _, trustRef, complete in
                let trust = sec_trust_copy_ref(trustRef).takeRetainedValue()
                SecTrustSetAnchorCertificates(trust, anchors as CFArray)
                SecTrustSetAnchorCertificatesOnly(trust, true)
                complete(SecTrustEvaluateWithError(trust, nil))
            },
            DispatchQueue.global()
        )
        return options
    }

    /// The certificates of a PEM text (each `BEGIN CERTIFICATE` block).
    private static func certificates(fromPEM pem: String) throws -> [SecCertificate] {
        let blocks = pem.components(separatedBy: "-----BEGIN CERTIFICATE-----").dropFirst()
        return try blocks.map { block in
            let body = block.components(separatedBy: "-----END CERTIFICATE-----")[0]
                .components(separatedBy: .whitespacesAndNewlines).joined()
            guard let der = Data(base64Encoded: body), let certificate = SecCertificateCreateWithData(nil, der as CFData) else {
                throw HeraldClientError("not a PEM certificate")
            }
            return certificate
        }
    }
}
#endif
