#if !canImport(Network)
import HeraldMQTT
import NIOCore
import NIOPosix
import NIOSSL

/// The MQTT connection on Linux: NIOPosix, TLS through NIOSSL.
enum MQTTTransport {
    static func connect(_ configuration: HeraldClient.Configuration) async throws -> NIOAsyncChannel<MQTTPacket, MQTTPacket> {
        let sslContext = try configuration.tls.map { tls in
            var settings = TLSConfiguration.makeClientConfiguration()
            if let pems = tls.trustedCertificatesPEM {
                settings.trustRoots = .certificates(try pems.flatMap { try NIOSSLCertificate.fromPEMBytes(Array($0.utf8)) })
            }
            return try NIOSSLContext(configuration: settings)
        }
        let serverName = configuration.tls?.serverName ?? configuration.host
        return try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(10))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connect(host: configuration.host, port: configuration.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        let isAddress = (try? SocketAddress(ipAddress: serverName, port: 0)) != nil
                        try channel.pipeline.syncOperations.addHandler(
                            try NIOSSLClientHandler(context: sslContext, serverHostname: isAddress ? nil : serverName)
                        )
                    }
                    return try MQTTTransport.wrap(channel)
                }
            }
    }
}
#endif
