import Foundation
import HeraldCore
import HeraldGateway
import HeraldMQTT
import HeraldStore
import HeraldTestSupport
import NIOCore
import ServiceLifecycle
import Testing

@Suite struct GatewayDeliveryTests {
    @Test func aConnectedDeviceReceivesAcknowledgesAndTheStoreRecordsIt() async throws {
        try await GatewayTest.run { test in
            let (device, _, client) = try await test.connectedDevice()
            async let outcome = test.gateway.deliver(test.message("hello", id: "m1"), to: device)
            let publish = try #require(try await client.nextPublish())
            #expect(publish.topic == "herald/\(device.registrationID)/push")
            #expect(publish.qos == .atLeastOnce)
            // DUP may be set: when the message is stored before the connection's replay has
            // read the inbox, the replay sends it (as DUP) and the live copy is dropped.
            #expect(String(buffer: publish.payload) == "hello")
            #expect(try await outcome == .acknowledged)
            #expect(try await client.nextPublish(timeout: .milliseconds(300)).map { _ in true } == nil)
            #expect(try await test.eventually { try await test.store.acknowledgedSeq(deviceID: device.deviceID) == 1 })
            #expect(try await test.store.pendingMessages(deviceID: device.deviceID).isEmpty)
        }
    }

    /// Stored messages handed to the gateway at once are written together (one statement
    /// for those that arrive while a write is in flight) and reach the device in the order
    /// of their seqs, each once.
    @Test func concurrentStoredMessagesAreStoredTogetherAndArriveInSeqOrder() async throws {
        try await GatewayTest.run { test in
            let (device, _, client) = try await test.connectedDevice()
            let outcomes = Task {
                try await withThrowingTaskGroup(of: [DeliveryOutcome].self) { group in
                    for index in 0..<40 {
                        group.addTask { try await test.gateway.deliver(test.message("m\(index)", id: "m\(index)"), to: [device]) }
                    }
                    return try await group.reduce(into: []) { $0 += $1 }
                }
            }
            var received: [String] = []
            while received.count < 40, let publish = try await client.nextPublish() {
                received.append(String(buffer: publish.payload))
            }
            #expect(try await outcomes.value == Array(repeating: .acknowledged, count: 40))
            #expect(Set(received).count == 40)
            #expect(try await client.nextPublish(timeout: .milliseconds(300)) == nil)
            // The order they arrived in is the order of their seqs in the store.
            #expect(try await test.eventually { try await test.store.acknowledgedSeq(deviceID: device.deviceID) == 40 })
            let rows = try await test.store.sql.query(
                "SELECT msg_id FROM device_messages WHERE device_id = \(device.deviceID) ORDER BY seq",
                logger: TestDatabase.logger
            )
            var stored: [String] = []
            for try await id in rows.decode(String.self) { stored.append(id) }
            #expect(stored == received)
        }
    }

    /// Two fan-outs store seqs 2 and 3 for a device, and the second reaches the gateway
    /// first: the device still gets 2 then 3, so acknowledging 3 never covers a 2 it hasn't
    /// acknowledged, and a disconnect before acknowledging 2 leaves both for the replay.
    @Test func aStoredMessageThatSkipsASeqGoesOutAfterTheOneBeforeIt() async throws {
        try await GatewayTest.run { test in
            let (device, secret, client) = try await test.connectedDevice()
            // A delivered message means the connection's first inbox load is over: what is
            // stored from here on is new to it (else that load could bring both messages).
            async let primed = test.gateway.deliver(test.message("zero", id: "zero"), to: device)
            #expect(String(buffer: try #require(try await client.nextPublish()).payload) == "zero")
            #expect(try await primed == .acknowledged)
            let one = try #require(
                try await test.store.gateway.enqueue(
                    deviceID: device.deviceID,
                    msgID: "one",
                    payload: Array("one".utf8),
                    expiresAt: .distantFuture
                )
            )
            let two = try #require(
                try await test.store.gateway.enqueue(
                    deviceID: device.deviceID,
                    msgID: "two",
                    payload: Array("two".utf8),
                    expiresAt: .distantFuture
                )
            )
            #expect([one.seq, two.seq] == [2, 3])
            async let outcomes = test.gateway.send(test.message("two", id: "two"), to: [device], seqs: [device.deviceID: 3], ackTimeout: .seconds(2))
            let first = try #require(try await client.nextPublish(acknowledge: false))
            #expect(String(buffer: first.payload) == "one")
            // The device goes away without acknowledging either.
            await client.close()
            let outcome = try await outcomes
            #expect(outcome == [.noAcknowledgement] || outcome == [.notConnected])
            #expect(try await test.eventually { try await test.store.acknowledgedSeq(deviceID: device.deviceID) == 1 })

            let again = try await test.connect(device, secret: secret)
            let replayed = [try await again.nextPublish(), try await again.nextPublish()].compactMap { $0 }
            #expect(replayed.map { String(buffer: $0.payload) } == ["one", "two"])
            #expect(try await test.eventually { try await test.store.acknowledgedSeq(deviceID: device.deviceID) == 3 })
        }
    }

    /// Copies never sent before carry no DUP: a device offline since they were stored gets
    /// them as first sends.
    @Test func anOfflineDeviceGetsWhatItMissedInOrderWithoutDUPAndNothingExpired() async throws {
        try await GatewayTest.run { test in
            let (device, secret) = try await test.device()
            for text in ["one", "two", "three"] {
                #expect(try await test.gateway.deliver(test.message(text), to: device) == .notConnected)
            }
            _ = try await test.store.gateway.enqueue(
                deviceID: device.deviceID,
                msgID: "old",
                payload: Array("expired".utf8),
                expiresAt: Date(timeIntervalSinceNow: -1)
            )
            #expect(try await test.gateway.deliver(test.message("four"), to: device) == .notConnected)

            let client = try await test.connect(device, secret: secret)
            var received: [String] = []
            while let publish = try await client.nextPublish(timeout: .seconds(2)) {
                #expect(!publish.dup)
                received.append(String(buffer: publish.payload))
            }
            #expect(received == ["one", "two", "three", "four"])
            #expect(try await test.eventually { try await test.store.acknowledgedSeq(deviceID: device.deviceID) == 5 })
        }
    }

    /// More stored messages than a page of the inbox (and than the 1,000 a replay once
    /// stopped at): one connection gets them all, in order, each once, as it acknowledges.
    @Test func aDeviceWithThousandsOfStoredMessagesGetsThemAllInOrderOnOneConnection() async throws {
        try await GatewayTest.run { test in
            let (device, secret) = try await test.device()
            let count = 2_500
            let texts = (0..<count).map { "m\($0)" }
            _ = try await test.store.gateway.enqueue(
                texts.map { InboxBroadcast(deviceIDs: [device.deviceID], msgID: $0, payload: Array($0.utf8), expiresAt: .distantFuture) }
            )
            let client = try await test.connect(device, secret: secret)
            var received: [String] = []
            while received.count < count, let publish = try await client.nextPublish() { received.append(String(buffer: publish.payload)) }
            // (Counted and compared apart: a failure prints two numbers, not 5,000 strings.)
            #expect(received.count == count)
            #expect(received.elementsEqual(texts))
            #expect(try await client.nextPublish(timeout: .milliseconds(300)) == nil)
            #expect(client.channel.isActive)
            #expect(try await test.eventually { try await test.store.acknowledgedSeq(deviceID: device.deviceID) == Int64(count) })
        }
    }

    /// A device that reads nothing while many stored messages are pushed to it holds its
    /// in-flight window and no more (the rest stays in the store, the connection stays
    /// up), other devices are served meanwhile, and once it acknowledges it gets
    /// everything, in order, each once.
    @Test func aDeviceThatDoesNotAcknowledgeHoldsItsWindowAndDisturbsNoOtherDevice() async throws {
        try await GatewayTest.run(configuration: .test(maxInFlight: 4, maxQueued: 20)) { test in
            let (device, _, client) = try await test.connectedDevice()
            let (other, _, otherClient) = try await test.connectedDevice()
            let count = 200
            let outcomes = try await withThrowingTaskGroup(of: DeliveryOutcome.self) { group in
                for index in 0..<count {
                    group.addTask { try await test.gateway.deliver(test.message("m\(index)", id: "m\(index)"), to: device, ackTimeout: .seconds(1)) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.count == count)
            var window: [MQTTPacket.Publish] = []
            while let publish = try await client.nextPublish(acknowledge: false, timeout: .milliseconds(500)) { window.append(publish) }
            #expect(window.count == 4)
            #expect(client.channel.isActive)

            async let otherOutcome = test.gateway.deliver(test.message("meanwhile"), to: other)
            #expect(try await otherClient.nextPublish().map { String(buffer: $0.payload) } == "meanwhile")
            #expect(try await otherOutcome == .acknowledged)

            for publish in window { try await client.send(.pubAck(packetID: try #require(publish.packetID))) }
            var received = window.map { String(buffer: $0.payload) }
            while received.count < count, let publish = try await client.nextPublish() { received.append(String(buffer: publish.payload)) }
            #expect(try await client.nextPublish(timeout: .milliseconds(300)) == nil)
            let rows = try await test.store.sql.query(
                "SELECT msg_id FROM device_messages WHERE device_id = \(device.deviceID) ORDER BY seq",
                logger: TestDatabase.logger
            )
            var stored: [String] = []
            for try await id in rows.decode(String.self) { stored.append(id) }
            #expect(stored.count == count)
            #expect(received.count == count)
            #expect(received.elementsEqual(stored))
        }
    }

    /// A copy a connection sent and the device never acknowledged comes again on the next
    /// connection with DUP (the store recorded that it was sent); one that was never sent
    /// comes without.
    @Test func aCopySentBeforeComesAgainWithDUPAndANeverSentOneWithout() async throws {
        try await GatewayTest.run { test in
            let (device, secret, client) = try await test.connectedDevice()
            async let outcome = test.gateway.deliver(test.message("sent", id: "sent"), to: device, ackTimeout: .milliseconds(300))
            let first = try #require(try await client.nextPublish(acknowledge: false))
            #expect(String(buffer: first.payload) == "sent")
            #expect(!first.dup)
            #expect(try await outcome == .noAcknowledgement)
            #expect(try await test.eventually { try await test.store.sentSeq(deviceID: device.deviceID) == 1 })
            await client.close()
            #expect(try await test.eventually { !test.gateway.isConnected(device.registrationID) })
            #expect(try await test.gateway.deliver(test.message("unsent", id: "unsent"), to: device) == .notConnected)
            // Released: a connection that claims the device before would find it held, and
            // set DUP on both (``aDeviceTakenFromAnotherNodeGetsDUPOnEverythingThatNodeMayHaveSent``).
            #expect(try await test.eventually { try await test.store.sessionHolder(deviceID: device.deviceID) == nil })

            let again = try await test.connect(device, secret: secret)
            let replayed = [try await again.nextPublish(), try await again.nextPublish()].compactMap { $0 }
            #expect(replayed.map { String(buffer: $0.payload) } == ["sent", "unsent"])
            #expect(replayed.map(\.dup) == [true, false])
        }
    }

    /// A connection gives the device's session up only after what it sent is written: the
    /// next connection, on whichever node, finds the session free and reads every copy
    /// this one sent as sent (DUP), none missing from a batch not yet written.
    @Test func aSessionIsFreeOnlyOnceWhatItsConnectionSentIsWritten() async throws {
        try await GatewayTest.run { test in
            let (device, _, client) = try await test.connectedDevice()
            async let outcome = test.gateway.deliver(test.message("sent"), to: device, ackTimeout: .milliseconds(300))
            _ = try #require(try await client.nextPublish(acknowledge: false))
            await client.close()
            #expect(try await test.eventually { try await test.store.sessionHolder(deviceID: device.deviceID) == nil })
            #expect(try await test.store.sentSeq(deviceID: device.deviceID) == 1)
            _ = try await outcome
        }
    }

    /// A device whose session another node holds (its connection there open, or the node
    /// dead before writing what it sent) comes here: that node may have sent any copy in
    /// the inbox, and its "sent through" position, written in batches, may never be
    /// written. Every copy the replay sends carries DUP, the ones stored later don't.
    @Test func aDeviceTakenFromAnotherNodeGetsDUPOnEverythingThatNodeMayHaveSent() async throws {
        try await GatewayTest.run { test in
            let (device, secret) = try await test.device()
            #expect(try await test.gateway.deliver(test.message("one", id: "one"), to: device) == .notConnected)
            #expect(try await test.gateway.deliver(test.message("two", id: "two"), to: device) == .notConnected)
            // Another node's connection holds the device and sent both; nothing recorded.
            _ = try await test.store.gateway.claimSessions([device], node: "another-node")
            #expect(try await test.store.sentSeq(deviceID: device.deviceID) == 0)

            let client = try await test.connect(device, secret: secret)
            let replayed = [try await client.nextPublish(), try await client.nextPublish()].compactMap { $0 }
            #expect(replayed.map { String(buffer: $0.payload) } == ["one", "two"])
            #expect(replayed.map(\.dup) == [true, true])
            async let outcome = test.gateway.deliver(test.message("three", id: "three"), to: device)
            let later = try #require(try await client.nextPublish())
            #expect(String(buffer: later.payload) == "three")
            #expect(!later.dup)
            #expect(try await outcome == .acknowledged)
        }
    }

    @Test func aMessageAcceptedBeforeTheGatewayStartedIsSentWithDUP() async throws {
        try await GatewayTest.run { test in
            let (device, secret, client) = try await test.connectedDevice()
            await client.close()
            #expect(try await test.eventually { try await test.store.sessionHolder(deviceID: device.deviceID) == nil })
            // Accepted an hour ago (its id says when): a process before this one may have sent
            // it, and a crash may have lost the record. Accepted now: never sent.
            let now = UInt64(Date().timeIntervalSince1970 * 1000)
            let old = Identifiers.msgID(milliseconds: now - 3_600_000, node: 0, sequence: 0)
            let new = Identifiers.msgID(milliseconds: now + 1000, node: 0, sequence: 0)
            #expect(try await test.gateway.deliver(test.message("old", id: old), to: device) == .notConnected)
            #expect(try await test.gateway.deliver(test.message("new", id: new), to: device) == .notConnected)
            let again = try await test.connect(device, secret: secret)
            let replayed = [try await again.nextPublish(), try await again.nextPublish()].compactMap { $0 }
            #expect(replayed.map { String(buffer: $0.payload) } == ["old", "new"])
            #expect(replayed.map(\.dup) == [true, false])

            // Routed to the connection (a job an earlier process left unfinished): the same.
            async let routedOld = test.gateway.deliver(
                test.message("old again", id: Identifiers.msgID(milliseconds: now - 1000, node: 0, sequence: 0)),
                to: device
            )
            let live = try #require(try await again.nextPublish())
            #expect(String(buffer: live.payload) == "old again")
            #expect(live.dup)
            #expect(try await routedOld == .acknowledged)
            async let routedNew = test.gateway.deliver(
                test.message("new again", id: Identifiers.msgID(milliseconds: now + 2000, node: 0, sequence: 0)),
                to: device
            )
            let fresh = try #require(try await again.nextPublish())
            #expect(String(buffer: fresh.payload) == "new again")
            #expect(!fresh.dup)
            #expect(try await routedNew == .acknowledged)
        }
    }

    @Test func anUnacknowledgedMessageIsReplayedOnTheNextConnection() async throws {
        try await GatewayTest.run { test in
            let (device, secret, client) = try await test.connectedDevice()
            async let outcome = test.gateway.deliver(test.message("ack me"), to: device, ackTimeout: .milliseconds(300))
            let first = try await client.nextPublish(acknowledge: false)
            #expect(first.map { String(buffer: $0.payload) } == "ack me")
            #expect(try await outcome == .noAcknowledgement)
            await client.close()

            let again = try await test.connect(device, secret: secret)
            let replayed = try #require(try await again.nextPublish())
            #expect(String(buffer: replayed.payload) == "ack me")
            #expect(replayed.dup)
            #expect(try await test.eventually { try await test.store.acknowledgedSeq(deviceID: device.deviceID) == 1 })
        }
    }

    // The limit ends a hang; it counts the wait for a test slot (``TestSlots``) too, which
    // grows with the suite: the test passed after 130-163 s of full runs of 662-683 tests
    // and 183-194 s of 694 here, while it takes 3-6 s alone. So the limit is well above
    // that; the watchdog (`scripts/run-tests.sh`) catches a hang sooner anyway.
    @Test(.timeLimit(.minutes(8))) func acknowledgementDeadlinesStayExactPastThousandsOfAcknowledgedDeliveries() async throws {
        try await GatewayTest.run { test in
            let (device, _, client) = try await test.connectedDevice()
            // Past the deadline queue's first compaction (at 4,096 deadlines).
            let count = 5000
            async let received: Int = {
                var received = 0
                while received < count, try await client.nextPublish() != nil { received += 1 }
                return received
            }()
            let acknowledged = try await withThrowingTaskGroup(of: DeliveryOutcome.self) { group in
                var acknowledged = 0
                for index in 0..<count {
                    if index >= 256, try await group.next() == .acknowledged { acknowledged += 1 }
                    group.addTask {
                        try await test.gateway.deliver(test.message("m\(index)", ttl: .zero), to: device, ackTimeout: .seconds(60))
                    }
                }
                for try await outcome in group where outcome == .acknowledged { acknowledged += 1 }
                return acknowledged
            }
            #expect(try await received == count)
            #expect(acknowledged == count)

            // The deadlines of those acknowledged deliveries are still queued; a later one
            // that isn't acknowledged still ends on time, and one that is, as acknowledged.
            async let late = test.gateway.deliver(test.message("late", ttl: .zero), to: device, ackTimeout: .milliseconds(300))
            #expect(try await client.nextPublish(acknowledge: false).map { String(buffer: $0.payload) } == "late")
            #expect(try await late == .noAcknowledgement)
            async let onTime = test.gateway.deliver(test.message("on time", ttl: .zero), to: device, ackTimeout: .milliseconds(300))
            #expect(try await client.nextPublish().map { String(buffer: $0.payload) } == "on time")
            #expect(try await onTime == .acknowledged)
        }
    }

    @Test func timeToLiveZeroIsForOnlineDevicesOnlyAndNeverStored() async throws {
        try await GatewayTest.run { test in
            let (device, secret) = try await test.device()
            #expect(try await test.gateway.deliver(test.message("now or never", ttl: .zero), to: device) == .notConnected)
            let client = try await test.connect(device, secret: secret)
            #expect(try await client.nextPublish(timeout: .milliseconds(500)) == nil)

            async let outcome = test.gateway.deliver(test.message("live", ttl: .zero), to: device)
            #expect(try await client.nextPublish().map { String(buffer: $0.payload) } == "live")
            #expect(try await outcome == .acknowledged)
            let rows = try await test.store.sql.query("SELECT count(*) FROM device_messages")
            for try await count in rows.decode(Int.self) { #expect(count == 0) }
        }
    }

    @Test func atMostNMessagesAreInFlightPerConnection() async throws {
        try await GatewayTest.run(configuration: .test(maxInFlight: 2)) { test in
            let (device, _, client) = try await test.connectedDevice()
            let outcomes = Task {
                try await withThrowingTaskGroup(of: DeliveryOutcome.self) { group in
                    for index in 0..<5 {
                        group.addTask { try await test.gateway.deliver(test.message("m\(index)", ttl: .zero), to: device) }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            var unacknowledged: [MQTTPacket.Publish] = []
            while let publish = try await client.nextPublish(acknowledge: false, timeout: .milliseconds(500)) { unacknowledged.append(publish) }
            #expect(unacknowledged.count == 2)
            for publish in unacknowledged { try await client.send(.pubAck(packetID: publish.packetID!)) }
            var rest = 0
            while try await client.nextPublish(timeout: .seconds(1)) != nil { rest += 1 }
            #expect(rest == 3)
            #expect(try await outcomes.value.filter { $0 == .acknowledged }.count == 5)
        }
    }

    @Test func aBogusPUBACKIsAProtocolViolation() async throws {
        try await GatewayTest.run { test in
            let (_, _, client) = try await test.connectedDevice()
            try await client.send(.pubAck(packetID: 4242))
            #expect(try await client.waitForClose())
        }
    }

    @Test func gracefulShutdownClosesConnectionsAndKeepsEveryAcknowledgement() async throws {
        try await TestDatabase.withStore { store in
            let app = try await store.api.createApp(name: "Shutdown")
            let registered = try await store.api.devices.register(appKey: app.app.appKey, DeviceRegistration(platform: .linux))
            let device = try #require(try await store.gateway.device(registrationID: registered.registrationID))
            // A long flush interval would lose acks if shutdown didn't flush.
            let gateway = Gateway(configuration: GatewayConfiguration(host: "127.0.0.1", port: 0), store: store.gateway, logger: TestDatabase.logger)
            let group = ServiceGroup(services: [gateway], logger: TestDatabase.logger)
            let running = Task { try await group.run() }
            let address = try await gateway.localAddress
            let (client, code) = try await TestMQTTClient.connect(
                to: address,
                clientID: device.registrationID,
                username: app.app.appKey,
                password: registered.deviceSecret
            )
            #expect(code == .accepted)
            for _ in 0..<200 where !gateway.isConnected(device.registrationID) { try await Task.sleep(for: .milliseconds(5)) }
            async let outcome = gateway.deliver(
                GatewayMessage(msgID: "m", payload: ByteBuffer(string: "bye"), timeToLive: .seconds(60)),
                to: device
            )
            _ = try await client.nextPublish()
            #expect(try await outcome == .acknowledged)

            await group.triggerGracefulShutdown()
            try await running.value
            #expect(try await client.waitForClose())
            #expect(try await store.acknowledgedSeq(deviceID: device.deviceID) == 1)
        }
    }
}
