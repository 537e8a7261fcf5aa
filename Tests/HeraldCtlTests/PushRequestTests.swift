import ArgumentParser
import Foundation
import Testing

@testable import heraldctl

/// The body `heraldctl push` sends for its flags, checked as JSON without a server.
@Suite struct PushRequestTests {
    func body(_ arguments: [String]) throws -> [String: Any] {
        let command = try PushCommand.parse(arguments)
        let data = try JSONEncoder().encode(try command.request())
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func anAliasAndAnAlertMakeTheSmallestBody() throws {
        let body = try body(["--alias", "alice", "--alert", "Hello"])
        #expect(body["audience"] as? [String: [String]] == ["alias": ["alice"]])
        #expect(body["notification"] as? [String: String] == ["alert": "Hello"])
        #expect(body["message"] == nil)
        #expect(body["options"] == nil)
    }

    @Test func allIsTheStringAll() throws {
        #expect(try body(["--all", "--alert", "hi"])["audience"] as? String == "all")
    }

    @Test func everyAudienceFormIsSentAsAnArray() throws {
        let body = try body(["--tag", "a", "--tag", "b", "--tag-and", "c", "--tag-not", "d", "--rid", "r1", "--alert", "x"])
        #expect(body["audience"] as? [String: [String]] == ["tag": ["a", "b"], "tag_and": ["c"], "tag_not": ["d"], "registration_id": ["r1"]])
    }

    @Test func aTitleMakesAnIOSAlertDictionaryWithTheAlertAsBody() throws {
        let body = try body([
            "--alias", "a", "--alert", "Body", "--title", "Title", "--subtitle", "Sub", "--badge", "+1", "--sound", "default",
            "--extra", "order=42", "--extra", "url=https://x/?a=b", "--thread-id", "t", "--mutable-content",
        ])
        let notification = try #require(body["notification"] as? [String: Any])
        #expect(notification["alert"] as? String == "Body")
        let ios = try #require(notification["ios"] as? [String: Any])
        #expect(ios["alert"] as? [String: String] == ["title": "Title", "subtitle": "Sub", "body": "Body"])
        #expect(ios["badge"] as? String == "+1")
        #expect(ios["sound"] as? String == "default")
        #expect(ios["thread-id"] as? String == "t")
        #expect(ios["mutable-content"] as? Bool == true)
        #expect(ios["extras"] as? [String: String] == ["order": "42", "url": "https://x/?a=b"])
    }

    @Test func aNumericBadgeIsANumberAndAChangeIsSigned() throws {
        let ios = (try body(["--alias", "a", "--badge", "3"])["notification"] as? [String: Any])?["ios"] as? [String: Any]
        #expect(ios?["badge"] as? Int == 3)
        let down = (try body(["--alias", "a", "--badge=-2"])["notification"] as? [String: Any])?["ios"] as? [String: Any]
        #expect(down?["badge"] as? String == "-2")
    }

    @Test func silentIsABackgroundPushWithoutAlert() throws {
        let notification = try #require(try body(["--rid", "r", "--silent", "--extra", "sync=1"])["notification"] as? [String: Any])
        #expect(notification["alert"] == nil)
        let ios = try #require(notification["ios"] as? [String: Any])
        #expect(ios["push_type"] as? String == "background")
        #expect(ios["content-available"] as? Bool == true)
        #expect(ios["alert"] == nil)
        #expect(ios["extras"] as? [String: String] == ["sync": "1"])
    }

    @Test func voipSetsThePushType() throws {
        let ios = (try body(["--rid", "r", "--voip", "--alert", "call"])["notification"] as? [String: Any])?["ios"] as? [String: Any]
        #expect(ios?["push_type"] as? String == "voip")
    }

    @Test func aMessageAloneCarriesTheExtras() throws {
        let body = try body(["--all", "--message", "refresh", "--message-title", "T", "--extra", "k=v"])
        #expect(body["notification"] == nil)
        let message = try #require(body["message"] as? [String: Any])
        #expect(message["msg_content"] as? String == "refresh")
        #expect(message["title"] as? String == "T")
        #expect(message["extras"] as? [String: String] == ["k": "v"])
        #expect(message.count == 3)
    }

    @Test func optionsAndCid() throws {
        let body = try body([
            "--alias", "a", "--alert", "x", "--ttl", "60", "--identifier", "order-1", "--replace", "order-1", "--apns-environment", "sandbox",
            "--priority", "5", "--cid", "c-1", "--spread", "30",
        ])
        let options = try #require(body["options"] as? [String: Any])
        #expect(options["time_to_live"] as? Int == 60)
        #expect(options["identifier"] as? String == "order-1")
        #expect(options["replace"] as? String == "order-1")
        #expect(options["apns_production"] as? Bool == false)
        #expect(options["priority"] as? Int == 5)
        #expect(options["big_push_duration"] as? Int == 30)
        #expect(options.count == 6)
        #expect(body["cid"] as? String == "c-1")
    }

    @Test(arguments: [
        (["--alert", "x"], "Choose an audience"),
        (["--all", "--tag", "t", "--alert", "x"], "--all cannot be combined"),
        (["--alias", "a"], "Nothing to send"),
        (["--alias", "a", "--alert", "x", "--spread", "0"], "--spread must be 1 to 1400 minutes"),
        (["--alias", "a", "--silent", "--alert", "x"], "remove --alert"),
        (["--alias", "a", "--silent", "--voip"], "exclusive"),
        (["--alias", "a", "--alert", "x", "--extra", "novalue"], "--extra must be key=value"),
        (["--alias", "a", "--alert", "x", "--extra", "=v"], "--extra must be key=value"),
        (["--alias", "a", "--alert", "x", "--extra", "k=1", "--extra", "k=2"], "given twice"),
        (["--alias", "a", "--alert", "x", "--badge", "many"], "--badge must be"),
        (["--alias", "a", "--alert", "x", "--badge", "++1"], "--badge must be"),
        (["--tag-not", "muted", "--alert", "x"], "--tag-not only narrows"),
        (["--alias", "a", "--alert", "x", "--replace", "r1", "--identifier", "r2"], "--identifier must be left out"),
        (["--alias", "a", "--message", "m", "--replace", "r1"], "--replace replaces a notification"),
        (["--alias", "a", "--alert", "x", "--ttl", "-1"], "--ttl"),
        (["--alias", "a", "--alert", "x", "--priority", "7"], "--priority"),
        (["--alias", "a", "--alert", "x", "--dry-run", "--wait"], "--dry-run"),
        (["--alias", "a", "--alert", "x", "--wait-timeout", "5"], "--wait-timeout goes with --wait"),
        (["--alias", "a", "--alert", "x", "--message-title", "t"], "go with --message"),
    ])
    func badFlagsAreRejectedBeforeSending(arguments: [String], message: String) {
        #expect {
            _ = try PushCommand.parse(arguments)
        } throws: { error in
            PushCommand.message(for: error).contains(message) && PushCommand.exitCode(for: error) == ExitCode(64)
        }
    }
}
