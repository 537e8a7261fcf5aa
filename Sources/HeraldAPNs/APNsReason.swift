/// Apple's reason for a refused request, or for a GOAWAY. New reasons are kept verbatim
/// in ``unknown(_:)``.
public enum APNsReason: Sendable, Hashable, CustomStringConvertible {
    case badCollapseId
    case badDeviceToken
    case badExpirationDate
    case badMessageId
    case badPriority
    case badTopic
    case deviceTokenNotForTopic
    case duplicateHeaders
    case idleTimeout
    case invalidPushType
    case missingDeviceToken
    case missingTopic
    case payloadEmpty
    case topicDisallowed
    case badCertificate
    case badCertificateEnvironment
    case expiredProviderToken
    case forbidden
    case invalidProviderToken
    case missingProviderToken
    case unrelatedKeyIdInToken
    case badEnvironmentKeyIdInToken
    case badPath
    case methodNotAllowed
    case expiredToken
    case unregistered
    case payloadTooLarge
    case tooManyProviderTokenUpdates
    case tooManyRequests
    case internalServerError
    case serviceUnavailable
    case shutdown
    case unknown(String)

    private static let known: [String: APNsReason] = [
        "BadCollapseId": .badCollapseId,
        "BadDeviceToken": .badDeviceToken,
        "BadExpirationDate": .badExpirationDate,
        "BadMessageId": .badMessageId,
        "BadPriority": .badPriority,
        "BadTopic": .badTopic,
        "DeviceTokenNotForTopic": .deviceTokenNotForTopic,
        "DuplicateHeaders": .duplicateHeaders,
        "IdleTimeout": .idleTimeout,
        "InvalidPushType": .invalidPushType,
        "MissingDeviceToken": .missingDeviceToken,
        "MissingTopic": .missingTopic,
        "PayloadEmpty": .payloadEmpty,
        "TopicDisallowed": .topicDisallowed,
        "BadCertificate": .badCertificate,
        "BadCertificateEnvironment": .badCertificateEnvironment,
        "ExpiredProviderToken": .expiredProviderToken,
        "Forbidden": .forbidden,
        "InvalidProviderToken": .invalidProviderToken,
        "MissingProviderToken": .missingProviderToken,
        "UnrelatedKeyIdInToken": .unrelatedKeyIdInToken,
        "BadEnvironmentKeyIdInToken": .badEnvironmentKeyIdInToken,
        "BadPath": .badPath,
        "MethodNotAllowed": .methodNotAllowed,
        "ExpiredToken": .expiredToken,
        "Unregistered": .unregistered,
        "PayloadTooLarge": .payloadTooLarge,
        "TooManyProviderTokenUpdates": .tooManyProviderTokenUpdates,
        "TooManyRequests": .tooManyRequests,
        "InternalServerError": .internalServerError,
        "ServiceUnavailable": .serviceUnavailable,
        "Shutdown": .shutdown,
    ]

    /// The reason as Apple spells it.
    public init(_ rawValue: String) {
        self = Self.known[rawValue] ?? .unknown(rawValue)
    }

    /// Apple's spelling.
    public var rawValue: String {
        switch self {
        case .badCollapseId: "BadCollapseId"
        case .badDeviceToken: "BadDeviceToken"
        case .badExpirationDate: "BadExpirationDate"
        case .badMessageId: "BadMessageId"
        case .badPriority: "BadPriority"
        case .badTopic: "BadTopic"
        case .deviceTokenNotForTopic: "DeviceTokenNotForTopic"
        case .duplicateHeaders: "DuplicateHeaders"
        case .idleTimeout: "IdleTimeout"
        case .invalidPushType: "InvalidPushType"
        case .missingDeviceToken: "MissingDeviceToken"
        case .missingTopic: "MissingTopic"
        case .payloadEmpty: "PayloadEmpty"
        case .topicDisallowed: "TopicDisallowed"
        case .badCertificate: "BadCertificate"
        case .badCertificateEnvironment: "BadCertificateEnvironment"
        case .expiredProviderToken: "ExpiredProviderToken"
        case .forbidden: "Forbidden"
        case .invalidProviderToken: "InvalidProviderToken"
        case .missingProviderToken: "MissingProviderToken"
        case .unrelatedKeyIdInToken: "UnrelatedKeyIdInToken"
        case .badEnvironmentKeyIdInToken: "BadEnvironmentKeyIdInToken"
        case .badPath: "BadPath"
        case .methodNotAllowed: "MethodNotAllowed"
        case .expiredToken: "ExpiredToken"
        case .unregistered: "Unregistered"
        case .payloadTooLarge: "PayloadTooLarge"
        case .tooManyProviderTokenUpdates: "TooManyProviderTokenUpdates"
        case .tooManyRequests: "TooManyRequests"
        case .internalServerError: "InternalServerError"
        case .serviceUnavailable: "ServiceUnavailable"
        case .shutdown: "Shutdown"
        case .unknown(let value): value
        }
    }

    public var description: String { rawValue }
}
