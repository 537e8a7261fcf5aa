// swift-tools-version:6.2
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

// Tests import what they use at the top level and not every module that defines a member.
let testSwiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "herald",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .executable(name: "herald", targets: ["HeraldServer"]),
        .library(name: "HeraldCore", targets: ["HeraldCore"]),
        .executable(name: "herald-device", targets: ["herald-device"]),
        .executable(name: "heraldctl", targets: ["heraldctl"]),
    ],
    dependencies: [
        // The device SDK and the MQTT codec it shares with the gateway.
        .package(path: "sdk/apple"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"4.0.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.34.1"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.4.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    ],
    targets: [
        // glibc's count of the heap in use (mallinfo2), which Swift's Glibc module doesn't declare.
        .target(name: "CHeraldMalloc"),
        .target(name: "CHeraldEpoll"),
        // Domain types, validation, payload rendering, error codes. No I/O.
        .target(
            name: "HeraldCore",
            dependencies: [
                "CHeraldMalloc",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
        // PostgreSQL access, migrations, the embedded cluster.
        .target(
            name: "HeraldStore",
            dependencies: [
                "HeraldCore",
                "HeraldRouting",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings,
            plugins: ["EmbedMigrations"]
        ),
        // The Open API on Hummingbird 2.
        .target(
            name: "HeraldAPI",
            dependencies: [
                "HeraldCore",
                "HeraldStore",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings,
            plugins: ["EmbedMigrations"]
        ),
        // The MQTT gateway devices hold long-lived connections to.
        .target(
            name: "HeraldGateway",
            dependencies: [
                "CHeraldEpoll",
                "HeraldCore",
                .product(name: "HeraldMQTT", package: "apple"),
                "HeraldStore",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // A conformant APNs server: for tests, local runs and benchmarks.
        .target(
            name: "HeraldAPNsSandbox",
            dependencies: [
                "HeraldCore", "HeraldHTTP2",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // `apns-sandbox`: the sandbox as a server, with its inspection endpoint.
        .executableTarget(
            name: "apns-sandbox",
            dependencies: [
                "HeraldAPNsSandbox",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // `fcm-sandbox`: the FCM sandbox as a server, for the benchmarks and the checks of
        // other implementations (google-auth, cryptography).
        .executableTarget(
            name: "fcm-sandbox",
            dependencies: [
                "HeraldFCMSandbox",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // `herald-fcm-bench`: HeraldFCM against the FCM sandbox, and google-auth + httpx as the peer.
        .executableTarget(
            name: "herald-fcm-bench",
            dependencies: [
                "HeraldCore", "HeraldFCM",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        // `herald-apns-bench`: HeraldAPNs against the sandbox, and aioapns as the peer.
        .executableTarget(
            name: "herald-apns-bench",
            dependencies: [
                "HeraldAPNs", "HeraldAPNsSandbox", "HeraldCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The APNs channel and its provider: HTTP/2 connection pool (over HeraldHTTP2), token and
        // certificate auth, one client per app and environment.
        .target(
            name: "HeraldAPNs",
            dependencies: [
                "HeraldCore", "HeraldHTTP2", "HeraldRouting",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // An HTTP/2 client connection carrying many requests, streams without channels: what
        // the push services' clients send over.
        .target(
            name: "HeraldHTTP2",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        // The FCM channel: HTTP v1 sends over HeraldHTTP2 connections, service-account
        // access tokens, FCM's error table.
        .target(
            name: "HeraldFCM",
            dependencies: [
                "HeraldCore", "HeraldRouting", "HeraldHTTP2",
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        // A conformant FCM server (token endpoint and messages:send) on SwiftNIO: tests, local
        // runs, benchmarks.
        .target(
            name: "HeraldFCMSandbox",
            dependencies: [
                "HeraldCore", "HeraldHTTP2",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        // Webhooks and JPush callbacks from the event log, and the outbound client that reaches
        // operators' receivers (addresses checked, no redirect).
        .target(
            name: "HeraldWebhooks",
            dependencies: [
                "HeraldCore", "HeraldStore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The SMS fallback: providers (an app's over HTTP, the sandbox) and the outbox's sender.
        .target(
            name: "HeraldSMS",
            dependencies: [
                "HeraldCore", "HeraldStore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // `herald-device`: registers, connects and prints what it receives.
        .executableTarget(
            name: "herald-device",
            dependencies: [
                .product(name: "HeraldKit", package: "apple"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // `heraldctl`: the admin CLI over the Open API.
        .executableTarget(
            name: "heraldctl",
            dependencies: [
                // `apns send` and `fcm send` talk to APNs and FCM themselves, with the clients
                // the message center uses.
                "HeraldCore", "HeraldAPNs", "HeraldFCM",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Where a copy goes: the center's routing rules, pure (no I/O), tested by tables.
        .target(
            name: "HeraldRouting",
            dependencies: ["HeraldCore"],
            swiftSettings: swiftSettings
        ),
        // The message center: job queue, audience fan-out, TCP-first routing, the channels' fallback.
        .target(
            name: "HeraldCenter",
            dependencies: [
                "HeraldCore", "HeraldRouting", "HeraldStore", "HeraldGateway",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // `herald-bench`: benchmarks, with the peers measured in the same run.
        .executableTarget(
            name: "herald-bench",
            dependencies: [
                "HeraldNode",
                "HeraldAPI",
                "HeraldAPNs",
                "HeraldAPNsSandbox",
                "HeraldCenter",
                "HeraldCore",
                "HeraldGateway",
                .product(name: "HeraldMQTT", package: "apple"),
                "HeraldStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The composition root: one function wires a whole node (pools, store facades,
        // gateway, center, API). herald serve, herald-bench and the tests call it.
        .target(
            name: "HeraldNode",
            dependencies: [
                "HeraldAPI",
                "HeraldAPNs",
                "HeraldAPNsSandbox",
                "HeraldFCM",
                "HeraldFCMSandbox",
                "HeraldCenter",
                "HeraldCore",
                "HeraldSMS",
                "HeraldWebhooks",
                "HeraldGateway",
                "HeraldStore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The `herald` executable: configuration, subcommands, composition root.
        .executableTarget(
            name: "HeraldServer",
            dependencies: [
                "HeraldNode",
                "HeraldAPI",
                "HeraldAPNs",
                "HeraldAPNsSandbox",
                "HeraldFCMSandbox",
                "HeraldCenter",
                "HeraldCore",
                "HeraldSMS",
                "HeraldWebhooks",
                "HeraldGateway",
                "HeraldStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // Build tool: turns migrations/*.sql into Swift string literals so the binary
        // carries its own schema.
        .executableTarget(name: "herald-embed", path: "Plugins/EmbedMigrationsTool"),
        .plugin(
            name: "EmbedMigrations",
            capability: .buildTool(),
            dependencies: ["herald-embed"]
        ),
        // Starts a private PostgreSQL for the tests.
        .target(
            name: "HeraldTestSupport",
            dependencies: [
                "HeraldCore",
                "HeraldStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "HeraldMQTT", package: "apple"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Tests/HeraldTestSupport",
            swiftSettings: swiftSettings
        ),
        // The end-to-end tests' support: a whole node from HeraldNode on a fresh database,
        // a typed HTTP client, devices (SDK and raw MQTT), the APNs sandbox.
        .target(
            name: "HeraldNodeTesting",
            dependencies: [
                "HeraldAPI",
                "HeraldAPNs",
                "HeraldAPNsSandbox",
                "HeraldCenter",
                .product(name: "HeraldKit", package: "apple"),
                "HeraldCore",
                "HeraldGateway",
                .product(name: "HeraldMQTT", package: "apple"),
                "HeraldNode",
                "HeraldStore",
                "HeraldTestSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/HeraldNodeTesting",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldCoreTests",
            dependencies: ["HeraldCore", "HeraldTestSupport"],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "HeraldFCMTests",
            dependencies: [
                "HeraldCore", "HeraldFCM", "HeraldFCMSandbox", "HeraldRouting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "HeraldRoutingTests",
            dependencies: ["HeraldCore", "HeraldRouting"],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "HeraldGatewayTests",
            dependencies: [
                "HeraldCore",
                "HeraldGateway",
                .product(name: "HeraldMQTT", package: "apple"),
                "HeraldStore",
                "HeraldTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "HeraldClientTests",
            dependencies: [
                "HeraldNodeTesting", "HeraldNode",
                "HeraldAPI",
                .product(name: "HeraldKit", package: "apple"),
                "HeraldGateway",
                .product(name: "HeraldMQTT", package: "apple"),
                "HeraldStore",
                "HeraldTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "HeraldAPNsTests",
            dependencies: [
                "HeraldAPNs", "HeraldAPNsSandbox", "HeraldCore", "HeraldRouting", "HeraldTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: testSwiftSettings
        ),
        // A cluster of `herald serve` processes on one database.
        .testTarget(
            name: "HeraldClusterTests",
            dependencies: [
                "HeraldNodeTesting", .product(name: "HeraldKit", package: "apple"), .product(name: "HeraldMQTT", package: "apple"), "HeraldStore",
                "HeraldTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "HeraldCenterTests",
            dependencies: [
                "HeraldNodeTesting", "HeraldNode",
                "HeraldAPI", "HeraldAPNs", "HeraldAPNsSandbox", "HeraldCenter", .product(name: "HeraldKit", package: "apple"), "HeraldCore",
                "HeraldFCMSandbox", "HeraldGateway", "HeraldSMS", "HeraldWebhooks",
                "HeraldStore", "HeraldTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "HeraldStoreTests",
            dependencies: [
                "HeraldStore", "HeraldCore", "HeraldTestSupport",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "HeraldAPITests",
            dependencies: [
                "HeraldNodeTesting",
                .product(name: "CompressNIO", package: "compress-nio"),
                "HeraldAPI",
                "HeraldAPNs",
                "HeraldAPNsSandbox",
                "HeraldFCM",
                "HeraldFCMSandbox",
                "HeraldCenter",
                "HeraldCore",
                "HeraldStore",
                "HeraldTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "HeraldServerTests",
            dependencies: [
                "HeraldServer", "HeraldSMS", "HeraldTestSupport",
                .product(name: "Configuration", package: "swift-configuration"),
            ],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "HeraldCtlTests",
            dependencies: [
                "HeraldNodeTesting", "HeraldNode",
                "heraldctl",
                "HeraldAPI",
                "HeraldAPNs",
                "HeraldAPNsSandbox",
                "HeraldCenter",
                .product(name: "HeraldKit", package: "apple"),
                "HeraldCore",
                "HeraldGateway",
                "HeraldStore",
                "HeraldTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: testSwiftSettings
        ),
    ]
)
