import Foundation

/// A misbehaviour the sandbox shows on demand, so a provider's handling of it can be tested.
public enum SandboxFault: Sendable, Hashable {
    /// Answer a request that passed validation with this status and Apple reason.
    case reject(status: Int, reason: String)
    /// Accept the request (it is recorded) but answer only after this delay.
    case delay(Duration)
    /// Never answer the request; it is not recorded.
    case neverAnswer
    /// Send GOAWAY with this reason instead of answering, then close the connection.
    ///
    /// The last stream id is the last stream the connection accepted, so the request that
    /// met the fault and every stream above it were not processed.
    case goAway(reason: String)

    /// 500 InternalServerError.
    public static let internalServerError = SandboxFault.reject(status: 500, reason: "InternalServerError")
    /// 503 ServiceUnavailable.
    public static let serviceUnavailable = SandboxFault.reject(status: 503, reason: "ServiceUnavailable")
}
