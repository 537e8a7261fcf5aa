import Foundation

/// APNs' answer to one request.
struct APNsResponse: Sendable {
    var status: Int
    var apnsID: UUID?
    var reason: APNsReason?
    /// Unregistered's timestamp.
    var timestamp: Date?
}
