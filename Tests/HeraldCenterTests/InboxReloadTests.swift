import Foundation
import HeraldCore
import HeraldGateway
import HeraldMQTT
import HeraldNodeTesting
import HeraldTestSupport
import NIOCore
import Testing

/// A copy stored in the inbox of a connected device without its connection being told
/// (another node's NOTIFY, lost with this node's LISTEN connection in a PostgreSQL
/// restart) reaches the device once the gateway is told its inboxes may have changed, as
/// the cluster membership does when it listens again; before, it waited for the device's
/// next push or connection.
@Suite struct InboxReloadTests {
    @Test func aCopyStoredUntoldReachesItsConnectedDeviceOnceInboxesMayHaveChanged() async throws {
        try await TestNode.run { test in
            let device = try await test.register(platform: "linux")
            let connection = try await test.rawConnection(device)
            let identity = try #require(try await test.stores.gateway.device(registrationID: device.registrationID))
            // A copy the connection is told of: once it arrives, the connection's first
            // inbox load is done (live copies wait for it), and can't find the next one.
            async let told = test.gateway.deliver(
                GatewayMessage(msgID: "told", payload: ByteBuffer(string: "told"), timeToLive: .seconds(600)),
                to: identity
            )
            let first = try #require(try await connection.nextPublish(timeout: .seconds(10)))
            #expect(String(buffer: first.payload) == "told")
            #expect(try await told == .acknowledged)
            let msgID = try await test.stores.api.newMsgID()
            let payload = Array(#"{"msg_id":"\#(msgID)","type":"message","message":{"msg_content":"stored untold"}}"#.utf8)
            _ = try await test.stores.gateway.enqueue(
                deviceID: identity.deviceID,
                msgID: msgID,
                payload: payload,
                expiresAt: Date().addingTimeInterval(600)
            )
            // Nobody told the connection: nothing comes.
            #expect(try await connection.nextPublish(timeout: .seconds(1)) == nil)

            test.gateway.inboxesMayHaveChanged()
            let publish = try #require(try await connection.nextPublish(timeout: .seconds(10)))
            #expect(String(buffer: publish.payload).contains("stored untold"))
            await connection.close()
        }
    }
}
