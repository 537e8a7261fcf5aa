// swift-tools-version:6.0
import PackageDescription

// HeraldKit: what an app embeds to receive Herald's pushes (registration, the long
// connection, what arrives, receipts), and the MQTT codec it shares with the server,
// which depends on this package by path. Only what a client needs: SwiftNIO (Network.framework
// through NIOTransportServices on Apple platforms, NIOPosix and NIOSSL on Linux) and swift-log.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "HeraldKit",
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8)],
    products: [
        .library(name: "HeraldKit", targets: ["HeraldKit"]),
        .library(name: "HeraldMQTT", targets: ["HeraldMQTT"]),
        .library(name: "HeraldKitApple", targets: ["HeraldKitApple"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-transport-services.git", from: "1.28.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        // MQTT 3.1.1 packets, their encoder and decoder: the device's and the gateway's.
        .target(
            name: "HeraldMQTT",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio")
            ],
            swiftSettings: swiftSettings
        ),
        // The device SDK: registration over HTTP, the long connection, what arrives, receipts.
        .target(
            name: "HeraldKit",
            dependencies: [
                "HeraldMQTT",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(platforms: [.linux])),
                .product(
                    name: "NIOTransportServices",
                    package: "swift-nio-transport-services",
                    condition: .when(platforms: [.iOS, .macOS, .tvOS, .watchOS, .visionOS])
                ),
            ],
            swiftSettings: swiftSettings
        ),
        // The thin Apple glue over HeraldKit: UserNotifications, PushKit, the Keychain,
        // Network.framework and UIKit. Empty where those don't exist; type-checked on Linux
        // against shims of Apple's symbols (scripts/check-apple-glue.sh, AppleShims/).
        .target(
            name: "HeraldKitApple",
            dependencies: [
                "HeraldKit",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldMQTTTests",
            dependencies: [
                "HeraldMQTT",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "HeraldKitTests",
            dependencies: ["HeraldKit", "HeraldMQTT"]
        ),
    ]
)
