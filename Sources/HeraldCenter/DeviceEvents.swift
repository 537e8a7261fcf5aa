import Foundation
import HeraldCore
import HeraldStore
import Logging
import NIOCore
import ServiceLifecycle

/// What devices publish on `herald/<registration id>/events`, queued by the gateway's
/// event loops and recorded in the store (docs/protocol.md): a service of the node, listed
/// before the gateway so that it records what the gateway hands it until the gateway has
/// stopped.
public final class DeviceEvents: Service, Sendable {
    struct Event: Sendable {
        var device: DeviceIdentity
        var payload: ByteBuffer
    }

    private let stream: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation

    private let store: CenterStore
    private let logger: Logger

    public init(store: CenterStore, capacity: Int = 100_000, logger: Logger) {
        self.store = store
        self.logger = logger
        (stream, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(capacity))
    }

    /// Hand this to the gateway as its `onDeviceEvent`.
    public func receive(_ device: DeviceIdentity, _ payload: ByteBuffer) {
        continuation.yield(Event(device: device, payload: payload))
    }

    /// Records events until a graceful shutdown, and those queued by then.
    public func run() async {
        await withGracefulShutdownHandler {
            await record()
        } onGracefulShutdown: {
            self.continuation.finish()
        }
    }

    private func record() async {
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
