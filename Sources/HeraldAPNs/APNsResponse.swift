import Foundation
import NIOCore

/// APNs' answer to one request.
struct APNsResponse: Sendable {
    var status: Int
    var apnsID: UUID?
    var reason: APNsReason?
    /// Unregistered's timestamp.
    var timestamp: Date?

    /// Reads the JSON body of an error answer (`{"reason": ..., "timestamp": ...}`).
    mutating func readBody(_ body: ByteBuffer) {
        guard body.readableBytes > 0,
            let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        else { return }
        reason = (object["reason"] as? String).map(APNsReason.init)
        if let milliseconds = object["timestamp"] as? NSNumber {
            timestamp = Date(timeIntervalSince1970: milliseconds.doubleValue / 1000)
        }
    }
}
