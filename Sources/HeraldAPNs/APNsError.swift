/// Why a send produced no APNs answer.
public struct APNsError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Code: String, Sendable, Hashable {
        case payloadEmpty, payloadTooLarge, collapseIDTooLong, invalidDeviceToken
        case deadlineExceeded, shutdown, connectionClosed, invalidCredentials, credentialsRefused
    }

    private let code: Code
    /// Extra context for logs; never shown to API clients.
    public let detail: String?

    private init(code: Code, detail: String?) {
        self.code = code
        self.detail = detail
    }

    init(_ code: APNsError, detail: String? = nil) {
        self.init(code: code.code, detail: detail)
    }

    /// The payload is empty.
    public static let payloadEmpty = APNsError(code: .payloadEmpty, detail: nil)
    /// The payload is over 4096 bytes (5120 for VoIP); not sent.
    public static let payloadTooLarge = APNsError(code: .payloadTooLarge, detail: nil)
    /// The collapse id is over 64 bytes; not sent.
    public static let collapseIDTooLong = APNsError(code: .collapseIDTooLong, detail: nil)
    /// The device token is not hex; not sent.
    public static let invalidDeviceToken = APNsError(code: .invalidDeviceToken, detail: nil)
    /// No answer came before the request's deadline.
    public static let deadlineExceeded = APNsError(code: .deadlineExceeded, detail: nil)
    /// The client is shutting down.
    public static let shutdown = APNsError(code: .shutdown, detail: nil)
    /// Connections kept closing before an answer, on every attempt.
    public static let connectionClosed = APNsError(code: .connectionClosed, detail: nil)
    /// The credentials can't be loaded (bad PEM).
    public static let invalidCredentials = APNsError(code: .invalidCredentials, detail: nil)
    /// APNs refused the credentials earlier: nothing more is sent for the app.
    public static let credentialsRefused = APNsError(code: .credentialsRefused, detail: nil)

    /// The reason to record for a copy this error stopped: Apple's name for a check made
    /// before sending, else a Herald code (`Timeout`, `ConnectionFailed`, `ClientStopped`,
    /// `InvalidCredentials`, `CredentialsRefused`). Stable, documented in the API's report.
    public var reason: String {
        switch code {
        case .payloadEmpty: "PayloadEmpty"
        case .payloadTooLarge: "PayloadTooLarge"
        case .collapseIDTooLong: "BadCollapseId"
        case .invalidDeviceToken: "BadDeviceToken"
        case .deadlineExceeded: "Timeout"
        case .shutdown: "ClientStopped"
        case .connectionClosed: "ConnectionFailed"
        case .invalidCredentials: "InvalidCredentials"
        case .credentialsRefused: "CredentialsRefused"
        }
    }

    /// Whether sending the same notification again may work: false when it was refused
    /// before sending (the notification itself is invalid) or the credentials are.
    public var isRetryable: Bool {
        switch code {
        case .deadlineExceeded, .shutdown, .connectionClosed: true
        case .payloadEmpty, .payloadTooLarge, .collapseIDTooLong, .invalidDeviceToken, .invalidCredentials, .credentialsRefused: false
        }
    }

    public static func == (lhs: APNsError, rhs: APNsError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// A short, label-safe name.
    public var description: String { code.rawValue }
}
