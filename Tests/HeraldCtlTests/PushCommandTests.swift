import Foundation
import HeraldCore
import HeraldKit
import HeraldTestSupport
import Synchronization
import Testing

/// `heraldctl push`, `recall` and `status` against the whole push path.
@Suite struct PushCommandTests {
    @Test func aPushToAnAliasReachesAPNsAndWaitFollowsItUntilDone() async throws {
        try await CenterCtlTest.run { test in
            let device = try await test.iosDevice(alias: "alice")
            let result = try await test.heraldctl(
                "push",
                "--alias",
                "alice",
                "--alert",
                "Your order shipped",
                "--badge",
                "+1",
                "--identifier",
                "order-1",
                "--wait",
                "--wait-timeout",
                "30"
            )
            #expect(result.status == 0, "\(result)")
            let msgID = try #require(result.messageID)
            #expect(msgID.count == Identifiers.msgIDLength && Int64(msgID) != nil, "\(msgID)")
            // Not a terminal: a line per change, the last one when routing is over.
            let lines = result.stdout.split(separator: "\n").map(String.init)
            #expect(lines.last == "targeted 1  tcp 0  apns 1  failed 0  waiting 0  opened 0  done", "\(result)")

            let received = try await test.apns(device.token)
            let notification = try #require(received.first)
            let aps = notification.payloadJSON?["aps"] as? [String: Any]
            #expect(aps?["alert"] as? String == "Your order shipped")
            #expect(aps?["badge"] as? Int == 1)
            #expect(notification.collapseID == "order-1")
        }
    }

    @Test func onATerminalWatchRedrawsAColouredBarInPlace() async throws {
        try await CenterCtlTest.run { test in
            let device = try await test.iosDevice(alias: "dave")
            let sent = try await test.heraldctl("push", "--alias", "dave", "--alert", "Hello")
            let msgID = try #require(sent.messageID, "\(sent)")
            guard let result = try await test.heraldctlOnTerminal("status", msgID, "--watch", "--wait-timeout", "30") else {
                print("util-linux script is not installed; the terminal output of --watch is not checked")
                return
            }
            #expect(result.status == 0, "\(result)")
            // Each report redraws the line: carriage return, erase line, bar.
            #expect(result.stdout.hasPrefix("\r\u{1B}[K["), "\(result)")
            let last = try #require(result.stdout.components(separatedBy: "\r\u{1B}[K").last)
            #expect(last.contains("\u{1B}[36m█"))
            #expect(last.contains("100%  targeted 1  tcp 0  apns 1"))
            #expect(last.hasSuffix("\r\n"))  // the terminal turns the final newline into CR LF
            #expect(try await test.apns(device.token).count == 1)
        }
    }

    @Test func dryRunCountsTheAudienceAndSendsNothing() async throws {
        try await CenterCtlTest.run { test in
            _ = try await test.iosDevice(tags: ["vip"])
            _ = try await test.iosDevice(tags: ["vip", "muted"])
            _ = try await test.iosDevice(tags: ["other"])
            let result = try await test.heraldctl("push", "--tag", "vip", "--tag-not", "muted", "--alert", "Sale", "--dry-run")
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout == "audience_size  1\nsent           no (dry run)\n")
            let json = try await test.heraldctl("push", "--tag", "vip", "--alert", "Sale", "--dry-run", "--json")
            #expect(try json.json["audience_size"] as? Int == 2)
            #expect(try await test.messageCount() == 0)
            #expect(test.sandbox.notifications.isEmpty)
        }
    }

    @Test func anAudienceNobodyMatchesIsTheAPIsError() async throws {
        try await CenterCtlTest.run { test in
            let result = try await test.heraldctl("push", "--alias", "nobody", "--alert", "Hello")
            #expect(result.status == 1)
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.hasPrefix("error \(HeraldError.Code.noAudienceMatch.rawValue): audience"), "\(result)")
            #expect(try await test.messageCount() == 0)
        }
    }

    @Test func statusShowsTheReportAndEachDevice() async throws {
        try await CenterCtlTest.run { test in
            let device = try await test.iosDevice(tags: ["news"])
            let other = try await test.iosDevice()
            let sent = try await test.heraldctl("push", "--tag", "news", "--title", "Title", "--alert", "Body", "--cid", "story-1", "--json")
            #expect(sent.status == 0, "\(sent)")
            let msgID = try #require(try sent.json["msg_id"] as? String)
            #expect(try sent.json["cid"] as? String == "story-1")
            // The same cid again is the same message.
            let again = try await test.heraldctl("push", "--tag", "news", "--title", "Title", "--alert", "Body", "--cid", "story-1")
            #expect(again.messageID == msgID)

            let watched = try await test.heraldctl("status", msgID, "--watch", "--wait-timeout", "30", "--json")
            #expect(watched.status == 0, "\(watched)")
            let report = try #require((try watched.json["reports"] as? [[String: Any]])?.first)
            #expect(report["done"] as? Bool == true)
            #expect(report["apns_sent"] as? Int == 1)

            let table = try await test.heraldctl("status", msgID)
            #expect(table.status == 0, "\(table)")
            let row = table.stdout.split(separator: "\n").last.map { $0.split(separator: " ").map(String.init) }
            #expect(row == [msgID, "1", "0", "0", "1", "0", "0", "0", "0", "0", "0", "0", "yes"])

            let devices = try await test.heraldctl("status", msgID, "--rid", device.registrationID, "--rid", other.registrationID)
            #expect(devices.status == 0, "\(devices)")
            let rows = devices.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
            #expect(rows.first == ["REGISTRATION_ID", "STATUS", "APNS_REASON", "OPENED"])
            #expect(rows.dropFirst().contains([device.registrationID, "sent_apns", "-", "no"]))
            #expect(rows.dropFirst().contains([other.registrationID, "not_targeted", "-", "no"]))

            let unknown = String(repeating: "0", count: 24)
            let missing = try await test.heraldctl("status", msgID, unknown)
            #expect(missing.status == 1)
            #expect(missing.stdout.contains(msgID))
            #expect(missing.stderr == "error: no message \(unknown) in this app\n")
            #expect(try await test.heraldctl("status", unknown, "--watch").status == 1)
        }
    }

    @Test func recallByMessageIDAndByIdentifier() async throws {
        try await CenterCtlTest.run { test in
            // Offline and without APNs: copies wait in the inbox, where recall cancels them.
            _ = try await test.linuxDevice(alias: "bob")
            // --wait: the copy is in the inbox (not still being fanned out) when it is recalled.
            let first = try await test.heraldctl("push", "--alias", "bob", "--message", "refresh", "--wait", "--wait-timeout", "30")
            let firstID = try #require(first.messageID, "\(first)")
            let recalled = try await test.heraldctl("recall", firstID)
            #expect(recalled.status == 0, "\(recalled)")
            #expect(recalled.stdout == "recalled \(firstID)\n")

            let second = try await test.heraldctl("push", "--alias", "bob", "--alert", "Sale", "--identifier", "sale-1")
            let secondID = try #require(second.messageID, "\(second)")
            let byIdentifier = try await test.heraldctl("recall", "--identifier", "sale-1", "--json")
            #expect(byIdentifier.status == 0, "\(byIdentifier)")
            #expect(try byIdentifier.json["recalled"] as? [String] == [secondID])

            let report = try await test.heraldctl("status", firstID, "--json")
            let recalledReport = try #require((try report.json["reports"] as? [[String: Any]])?.first)
            #expect(recalledReport["recalled"] as? Int == 1)

            // Again is harmless; an identifier never sent is the API's error.
            #expect(try await test.heraldctl("recall", firstID).stdout == "recalled \(firstID)\n")
            let unknown = try await test.heraldctl("recall", "--identifier", "never-sent")
            #expect(unknown.status == 1)
            #expect(
                unknown.stderr == "error \(HeraldError.Code.messageNotFound.rawValue): identifiers: no message with these identifiers in this app\n"
            )
        }
    }

    @Test func watchFollowsCopiesWaitingInAnInboxUntilTheySettle() async throws {
        try await CenterCtlTest.run { test in
            // Offline and without APNs: the copy waits in the inbox once routing is done.
            _ = try await test.linuxDevice(alias: "dave")
            let sent = try await test.heraldctl("push", "--alias", "dave", "--message", "hello", "--wait", "--wait-timeout", "30")
            #expect(sent.status == 0, "\(sent)")
            #expect(sent.stderr.contains("routing is done; 1 copy waits in an inbox for an offline device"), "\(sent)")
            let msgID = try #require(sent.messageID)

            // Not settled: --watch keeps following, and says why.
            let watched = try await test.heraldctl("status", msgID, "--watch", "--wait-timeout", "2")
            #expect(watched.status == 75, "\(watched)")
            #expect(watched.stderr.contains("1 copy waits in an inbox for an offline device (following them)"), "\(watched)")
            let routed = try await test.heraldctl("status", msgID, "--watch", "--until", "routed", "--wait-timeout", "30")
            #expect(routed.status == 0, "\(routed)")
            #expect(try await test.heraldctl("status", msgID, "--until", "routed").status == 64)
        }
    }

    @Test func aSilentPushIsABackgroundAPNsPushWithItsExtras() async throws {
        try await CenterCtlTest.run { test in
            let device = try await test.iosDevice()
            let result = try await test.heraldctl(
                "push",
                "--rid",
                device.registrationID,
                "--silent",
                "--extra",
                "sync=inbox",
                "--wait",
                "--wait-timeout",
                "30"
            )
            #expect(result.status == 0, "\(result)")
            let notification = try #require(try await test.apns(device.token).first)
            #expect(notification.pushType == "background")
            let aps = notification.payloadJSON?["aps"] as? [String: Any]
            #expect(aps?["content-available"] as? Int == 1)
            #expect(aps?["alert"] == nil)
            #expect(notification.payloadJSON?["sync"] as? String == "inbox")
        }
    }

    @Test func anOnlineDeviceGetsThePushOverTCP() async throws {
        try await CenterCtlTest.run { test in
            let device = try await test.linuxDevice(alias: "carol")
            let client = HeraldClient(
                configuration: .init(host: "127.0.0.1", port: test.node.gatewayPort, appKey: test.app.app.appKey, keepAlive: 30),
                credentials: DeviceCredentials(registrationID: device.registrationID, deviceSecret: device.deviceSecret),
                logger: TestDatabase.logger
            )
            let alerts = Mutex<[String]>([])
            let running = Task { await client.run() }
            let reading = Task {
                for await event in client.events {
                    if case .notification(let notification) = event { alerts.withLock { $0.append(notification.alert ?? "") } }
                }
            }
            defer {
                running.cancel()
                reading.cancel()
            }
            let deadline = ContinuousClock.now + .seconds(10)
            while !test.node.gateway.isConnected(device.registrationID), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }

            let result = try await test.heraldctl("push", "--alias", "carol", "--alert", "Hi Carol", "--wait", "--wait-timeout", "30")
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout.hasSuffix("targeted 1  tcp 1  apns 0  failed 0  waiting 0  opened 0  done\n"), "\(result)")
            #expect(alerts.withLock { $0 } == ["Hi Carol"])
        }
    }
}

extension PushCommandTests {
    /// heraldctl takes message ids as the server does: a 24-hex id stored before ids were
    /// decimal still works with `status` and `recall`.
    @Test func statusAndRecallTakeALegacyHexId() async throws {
        try await CenterCtlTest.run { test in
            _ = try await test.linuxDevice(alias: "carol")
            let sent = try await test.heraldctl("push", "--alias", "carol", "--message", "hello", "--wait", "--wait-timeout", "30")
            let msgID = try #require(sent.messageID, "\(sent)")
            #expect(Int64(msgID) != nil, "\(msgID)")
            let legacy = "0199" + "a1b2c3d4" + "e5f60718293a"
            try await test.node.stores.sql.query("UPDATE messages SET msg_id = \(legacy) WHERE msg_id = \(msgID)")
            let status = try await test.heraldctl("status", legacy, "--json")
            #expect(status.status == 0, "\(status)")
            #expect((try status.json["reports"] as? [[String: Any]])?.first?["msg_id"] as? String == legacy)
            let recalled = try await test.heraldctl("recall", legacy)
            #expect(recalled.stdout == "recalled \(legacy)\n", "\(recalled)")
        }
    }
}
