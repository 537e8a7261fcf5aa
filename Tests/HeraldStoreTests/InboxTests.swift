import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import PostgresNIO
import Testing

/// Inbox writes: several messages stored with one statement.
@Suite struct InboxTests {
    @Test func messagesStoredTogetherTakeEachDevicesNextSeqsInOrder() async throws {
        try await TestDatabase.withStore { store in
            let app = try await store.api.createApp(name: "Inbox")
            var ids: [Int64] = []
            for _ in 0..<3 {
                let registered = try await store.api.devices.register(appKey: app.app.appKey, DeviceRegistration(platform: .linux))
                ids.append(try #require(try await store.gateway.device(registrationID: registered.registrationID)).deviceID)
            }
            // Device 0 already holds one message.
            _ = try await store.gateway.enqueue(deviceID: ids[0], msgID: "before", payload: Array("before".utf8), expiresAt: .distantFuture)
            func broadcast(_ name: String, _ devices: [Int64]) -> InboxBroadcast {
                InboxBroadcast(deviceIDs: devices, msgID: name, payload: Array(name.utf8), expiresAt: .distantFuture)
            }
            let seqs = try await store.gateway.enqueue([
                broadcast("a", [ids[0], ids[1]]),
                broadcast("b", [ids[1], ids[2], ids[1]]),  // a device named twice gets one copy
                broadcast("none", []),
                broadcast("c", [ids[2], ids[0], 999_999]),  // no such device: no copy
            ])
            #expect(seqs == [[ids[0]: 2, ids[1]: 1], [ids[1]: 2, ids[2]: 1], [:], [ids[2]: 2, ids[0]: 3]])
            let inbox = try await store.pendingMessages(deviceID: ids[0])
            #expect(inbox.map(\.seq) == [1, 2, 3])
            #expect(inbox.map(\.msgID) == ["before", "a", "c"])
            #expect(inbox.map { String(decoding: $0.payload, as: UTF8.self) } == ["before", "a", "c"])
            #expect(try await store.pendingMessages(deviceID: ids[1]).map(\.msgID) == ["a", "b"])
            #expect(try await store.pendingMessages(deviceID: ids[2]).map(\.msgID) == ["b", "c"])
        }
    }

    /// A device's inbox is read a page at a time, each after the last; a page says whether
    /// it reached the device's latest seq; copies at or below the recorded "sent through"
    /// are marked sent, and acknowledged ones are not read.
    @Test func theInboxIsReadInPagesAfterAPositionAndMarksWhatWasSent() async throws {
        try await TestDatabase.withStore { store in
            let app = try await store.api.createApp(name: "Pages")
            let registered = try await store.api.devices.register(appKey: app.app.appKey, DeviceRegistration(platform: .linux))
            let device = try #require(try await store.gateway.device(registrationID: registered.registrationID)).deviceID
            _ = try await store.gateway.enqueue(
                (1...5).map { InboxBroadcast(deviceIDs: [device], msgID: "m\($0)", payload: [], expiresAt: .distantFuture) }
            )
            let identity = DeviceIdentity(deviceID: device, appID: app.app.id, registrationID: registered.registrationID)
            let epoch = try await store.gateway.claimSessions([identity], node: "n1")[0].epoch
            try await store.gateway.acknowledge([device: 1], sent: [device: 3], epochs: [device: epoch])
            let first = try await store.gateway.pendingInbox(deviceID: device, after: 0, limit: 2)
            #expect(first.messages.map(\.seq) == [2, 3])
            #expect(first.messages.map(\.wasSent) == [true, true])
            #expect(first.through == 3)
            #expect(!first.isComplete)
            let second = try await store.gateway.pendingInbox(deviceID: device, after: first.through, limit: 2)
            #expect(second.messages.map(\.seq) == [4, 5])
            #expect(second.messages.map(\.wasSent) == [false, false])
            #expect(!second.isComplete)
            let last = try await store.gateway.pendingInbox(deviceID: device, after: second.through, limit: 2)
            #expect(last.messages.isEmpty)
            #expect(last.through == 5)
            #expect(last.isComplete)
            // Neither position moves back.
            try await store.gateway.acknowledge([device: 0], sent: [device: 2], epochs: [device: epoch])
            #expect(try await store.acknowledgedSeq(deviceID: device) == 1)
            #expect(try await store.sentSeq(deviceID: device) == 3)
        }
    }
}
