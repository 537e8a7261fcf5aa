import Foundation
import HeraldCore
import HeraldStore
import Logging
import NIOCore

/// What devices publish on `herald/<registration id>/events`, queued by the gateway's
/// event loops and recorded by the center (docs/protocol.md).
public final class DeviceEvents: Sendable {
    struct Event: Sendable {
        var device: DeviceIdentity
        var payload: ByteBuffer
    }

    private let stream: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation

    public init(capacity: Int = 100_000) {
        (stream, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(capacity))
    }

    /// Hand this to the gateway as its `onDeviceEvent`.
    public func receive(_ device: DeviceIdentity, _ payload: ByteBuffer) {
        continuation.yield(Event(device: device, payload: payload))
    }

    func finish() { continuation.finish() }

    /// Records events until the stream finishes.
    func record(in store: CenterStore, logger: Logger) async {
        for await event in stream {
            guard let report = try? JSONDecoder().decode(Report.self, from: Data(event.payload.readableBytesView)) else {
                logger.debug("Ignored a device event that isn't one", metadata: ["herald.registration_id": "\(event.device.registrationID)"])
                continue
            }
            do {
                switch report.event {
                case "opened", "clicked":
                    if let msgID = report.msgID { try await store.markOpened(deviceID: event.device.deviceID, msgID: msgID) }
                case "background":
                    try await store.setInBackground(deviceID: event.device.deviceID, true)
                case "foreground":
                    try await store.setInBackground(deviceID: event.device.deviceID, false)
                case "category_version":
                    if let category = report.category, let version = report.version {
                        try await store.recordCategoryVersion(
                            appID: event.device.appID,
                            deviceID: event.device.deviceID,
                            identifier: category,
                            version: version
                        )
                    }
                default:
                    break
                }
            } catch {
                logger.warning("Could not record a device event", metadata: ["error": "\(error)"])
            }
        }
    }

    private struct Report: Decodable {
        var event: String
        var msgID: String?
        /// A `category_version` event's category and the configuration version held.
        var category: String?
        var version: Int64?

        enum CodingKeys: String, CodingKey {
            case event
            case msgID = "msg_id"
            case category, version
        }
    }
}
