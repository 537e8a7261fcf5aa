import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Testing

/// `heraldctl devices`, `tags` and `aliases` against a live server.
@Suite struct DeviceCommandTests {
    @Test func devicesAreShownAndUpdated() async throws {
        try await CtlTest.run { test in
            let app = try await test.createApp()
            let rid = try await test.registerDevice(app)

            let updated = try await test.operator_(app, "devices", "update", rid, "--add-tag", "vip", "--add-tag", "beta", "--alias", "alice")
            #expect(updated.status == 0, "\(updated)")
            #expect(updated.field("tags") == "beta, vip")
            #expect(updated.field("alias") == "alice")
            var stored = try #require(try await test.device(app, rid))
            #expect(Set(stored.tags) == ["vip", "beta"])
            #expect(stored.alias == "alice")

            let shown = try await test.operator_(app, "devices", "show", rid)
            #expect(shown.status == 0, "\(shown)")
            #expect(shown.field("registration_id") == rid)
            #expect(shown.field("platform") == "ios")
            #expect(shown.field("token_valid") == "yes")
            #expect(shown.stdout.split(separator: "\n").count == 11)

            let json = try await test.operator_(app, "devices", "show", rid, "--json")
            #expect(try json.json["registration_id"] as? String == rid)
            #expect(try json.json["alias"] as? String == "alice")

            let cleared = try await test.operator_(app, "devices", "update", rid, "--remove-tag", "beta", "--clear-alias")
            #expect(cleared.status == 0, "\(cleared)")
            stored = try #require(try await test.device(app, rid))
            #expect(stored.tags == ["vip"])
            #expect(stored.alias == nil)

            let allTags = try await test.operator_(app, "devices", "update", rid, "--clear-tags")
            #expect(allTags.field("tags") == "-")
            #expect(try await test.device(app, rid)?.tags == [])

            let deleted = try await test.operator_(app, "devices", "delete", rid)
            #expect(deleted.status == 0, "\(deleted)")
            #expect(try await test.device(app, rid) == nil)
            let gone = try await test.operator_(app, "devices", "show", rid)
            #expect(gone.status == 1)
            #expect(gone.stderr.hasPrefix("error \(HeraldError.Code.deviceNotFound.rawValue): "))
        }
    }

    @Test func aMobileNumberIsBoundInE164AndCleared() async throws {
        try await CtlTest.run { test in
            let app = try await test.createApp()
            let rid = try await test.registerDevice(app)
            let bound = try await test.operator_(app, "devices", "update", rid, "--mobile", "13800138000")
            #expect(bound.status == 0, "\(bound)")
            #expect(bound.field("mobile") == "+8613800138000")
            #expect(try await test.device(app, rid)?.mobile == "+8613800138000")
            let bad = try await test.operator_(app, "devices", "update", rid, "--mobile", "12345")
            #expect(bad.status == 1)
            #expect(bad.stderr.hasPrefix("error \(HeraldError.Code.invalidField.rawValue): mobile"), "\(bad)")
            #expect(try await test.device(app, rid)?.mobile == "+8613800138000")
            let cleared = try await test.operator_(app, "devices", "update", rid, "--clear-mobile")
            #expect(cleared.field("mobile") == "-")
            #expect(try await test.device(app, rid)?.mobile == nil)
            let both = try await test.operator_(app, "devices", "update", rid, "--mobile", "+8613800138000", "--clear-mobile")
            #expect(both.status != 0)
        }
    }

    @Test func aPushWithSMSCarriesItsSMSMessage() async throws {
        try await CtlTest.run { test in
            let app = try await test.createApp()
            let rid = try await test.registerDevice(app)
            let sent = try await test.operator_(app, "push", "--rid", rid, "--alert", "Code", "--sms", "Your code is 1234", "--sms-delay", "60")
            #expect(sent.status == 0, "\(sent)")
            let rows = try await test.store.sql.query("SELECT request::text FROM messages", logger: TestDatabase.logger)
            var requests: [PushRequest] = []
            for try await text in rows.decode(String.self) { requests.append(try JSONDecoder().decode(PushRequest.self, from: Data(text.utf8))) }
            #expect(requests.count == 1)
            #expect(
                try requests.first?.validated().sms == SMSFallback(delay: 60, content: "Your code is 1234", templateID: nil, params: nil, signID: nil)
            )
            let orphan = try await test.operator_(app, "push", "--rid", rid, "--alert", "x", "--sms-delay", "5")
            #expect(orphan.status != 0)
            #expect(orphan.stderr.contains("--sms-delay goes with --sms"), "\(orphan)")
        }
    }

    @Test func aTooLongTagIsTheAPIsLimitError() async throws {
        try await CtlTest.run { test in
            let app = try await test.createApp()
            let rid = try await test.registerDevice(app)
            let result = try await test.operator_(app, "devices", "update", rid, "--add-tag", String(repeating: "t", count: 41))
            #expect(result.status == 1)
            #expect(
                result.stderr.hasPrefix("error \(HeraldError.Code.invalidField.rawValue): tags.add")
                    || result.stderr.hasPrefix("error \(HeraldError.Code.limitExceeded.rawValue): tags.add"),
                "\(result)"
            )
            #expect(result.stdout.isEmpty)
        }
    }

    @Test func updateWithoutChangesIsAUsageError() async throws {
        try await CtlTest.run { test in
            let app = try await test.createApp()
            let result = try await test.operator_(app, "devices", "update", "0123456789abcdef0123")
            #expect(result.status == 64)
            #expect(result.stderr.contains("Nothing to change"))
            let both = try await test.operator_(app, "devices", "update", "0123456789abcdef0123", "--alias", "a", "--clear-alias")
            #expect(both.status == 64)
        }
    }

    @Test func tagsAreListedAddedRemovedCheckedAndDeleted() async throws {
        try await CtlTest.run { test in
            let app = try await test.createApp()
            let first = try await test.registerDevice(app)
            let second = try await test.registerDevice(app)

            let added = try await test.operator_(app, "tags", "add", "new users", first, second)
            #expect(added.status == 0, "\(added)")
            #expect(added.stdout == "added    2\nremoved  0\n")
            _ = try await test.operator_(app, "tags", "add", "vip", first)

            let list = try await test.operator_(app, "tags", "list")
            #expect(list.stdout == "TAG\nnew users\nvip\n")
            let json = try await test.operator_(app, "tags", "list", "--json")
            #expect(try json.json["tags"] as? [String] == ["new users", "vip"])

            #expect(try await test.operator_(app, "tags", "check", "vip", first).stdout == "yes\n")
            #expect(try await test.operator_(app, "tags", "check", "vip", second).stdout == "no\n")
            let checkJSON = try await test.operator_(app, "tags", "check", "vip", second, "--json")
            #expect(try checkJSON.json["result"] as? Bool == false)

            let removed = try await test.operator_(app, "tags", "remove", "new users", second)
            #expect(removed.stdout == "added    0\nremoved  1\n")
            #expect(try await test.device(app, second)?.tags == [])

            let deleted = try await test.operator_(app, "tags", "delete", "new users")
            #expect(deleted.status == 0, "\(deleted)")
            #expect(try await test.device(app, first)?.tags == ["vip"])

            let unknown = try await test.operator_(app, "tags", "add", "vip", "0123456789abcdef0123")
            #expect(unknown.status == 1)
            #expect(unknown.stderr.hasPrefix("error \(HeraldError.Code.deviceNotFound.rawValue): "))
            let noIDs = try await test.operator_(app, "tags", "add", "vip")
            #expect(noIDs.status == 64)
        }
    }

    @Test func aliasesAreShownAndDeleted() async throws {
        try await CtlTest.run { test in
            let app = try await test.createApp()
            let phone = try await test.registerDevice(app)
            let tablet = try await test.registerDevice(app)
            for rid in [phone, tablet] {
                let result = try await test.operator_(app, "devices", "update", rid, "--alias", "alice/β")
                #expect(result.status == 0, "\(result)")
            }

            let shown = try await test.operator_(app, "aliases", "show", "alice/β")
            #expect(shown.status == 0, "\(shown)")
            let lines = shown.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first == "REGISTRATION_ID")
            #expect(Set(lines.dropFirst()) == [phone, tablet])
            let json = try await test.operator_(app, "aliases", "show", "alice/β", "--json")
            #expect(Set(try #require(try json.json["registration_ids"] as? [String])) == [phone, tablet])

            let deleted = try await test.operator_(app, "aliases", "delete", "alice/β")
            #expect(deleted.status == 0, "\(deleted)")
            #expect(try await test.device(app, phone)?.alias == nil)
            let none = try await test.operator_(app, "aliases", "show", "alice/β")
            #expect(none.stdout == "no device has the alias alice/β\n")
        }
    }
}
