import Foundation
import HeraldCore
import Testing

/// What goes down each channel is valid JSON that says exactly what the push said, whatever
/// characters its strings hold.
@Suite struct RenderingTests {
    static let awkward = "quote \" backslash \\ slash / newline \n tab \t bell \u{07} nul \u{00} émoji 📣 end"

    @Test func theDevicePayloadCarriesEveryFieldAndEscapesWhatJSONNeeds() throws {
        let push = try Self.push(
            """
            {"audience":"all","notification":{"ios":{"alert":{"title":"T","body":\(Self.quoted(Self.awkward))},"badge":3,
             "sound":"s.caf","extras":{"k":\(Self.quoted(Self.awkward))}}},
             "message":{"msg_content":"hello","title":"in-app","extras":{"a":"b"}},"options":{"identifier":"story-1"}}
            """
        )
        let object = try Self.parse(PushRendering.devicePayload(push, msgID: "m1"))
        #expect(object["msg_id"] as? String == "m1")
        #expect(object["identifier"] as? String == "story-1")
        #expect(object["type"] as? String == "notification")
        let notification = try #require(object["notification"] as? [String: Any])
        #expect(notification["title"] as? String == "T")
        #expect(notification["alert"] as? String == Self.awkward)
        #expect(notification["badge"] as? Int == 3)
        #expect(notification["sound"] as? String == "s.caf")
        #expect((notification["extras"] as? [String: String])?["k"] == Self.awkward)
        let message = try #require(object["message"] as? [String: Any])
        #expect(message["msg_content"] as? String == "hello")
        #expect(message["title"] as? String == "in-app")
        #expect((message["extras"] as? [String: String]) == ["a": "b"])
    }

    /// The stored form of a request is written by hand; decoding it must give the same
    /// request back, field for field, for every field a request can have.
    @Test(arguments: [
        """
        {"audience":{"registration_id":["r1","r2"],"alias":["a\\"b"],"tag":["t1"],"tag_and":["t2","t3"],"tag_not":["t4"]},
         "notification":{"alert":"common","ios":{"alert":{"title":"T","subtitle":"S","body":"B"},"sound":"s.caf","badge":"-2",
           "thread-id":"th","category":"cat","content-available":true,"mutable-content":false,"interruption-level":"passive",
           "extras":{"k":"v","k2":"\\u0007"},"push_type":"voip"}},
         "message":{"msg_content":"hello","title":"in-app","content_type":"text","extras":{"a":"b"}},
         "options":{"time_to_live":0,"identifier":"id-1","replace":"id-0","apns_production":true,"priority":5},"cid":"c-1"}
        """,
        #"{"audience":"all","notification":{"ios":{"alert":"text","badge":7}}}"#,
        #"{"audience":{"alias":["x"]},"notification":{"ios":{"alert":{},"badge":"+3"}},"options":{}}"#,
        #"{"audience":{"tag":[]},"message":{"msg_content":""}}"#,
        FastReadingTests.rich,
        #"{"audience":"all","notification":{"ios":{"sound":{"critical":1,"name":"a\"b","volume":0.3},"extras":{"d":1.5e-7,"n":null}}}}"#,
    ])
    func theStoredRequestDecodesToTheSameRequest(_ json: String) throws {
        var request = try JSONDecoder().decode(PushRequest.self, from: Data(json.utf8))
        if request.message?.msgContent == "" { request.message?.msgContent = Self.awkward }
        let stored = request.storedJSON
        #expect(try JSONDecoder().decode(PushRequest.self, from: Data(stored)) == request)
        #expect(try JSONSerialization.jsonObject(with: Data(stored)) is [String: Any])
    }

    @Test func theAPNsPayloadHasApsExtrasAndHeraldsFieldsWithSortedKeys() throws {
        let push = try Self.push(
            """
            {"audience":"all","notification":{"ios":{"alert":"hi","badge":"+1","thread-id":"t","extras":{"z":"1","aps":"dropped"}}}}
            """
        )
        let bytes = PushRendering.apnsPayload(push, msgID: "m2", badge: 7)
        let object = try Self.parse(bytes)
        let aps = try #require(object["aps"] as? [String: Any])
        #expect(aps["alert"] as? String == "hi")
        #expect(aps["badge"] as? Int == 7)
        #expect(aps["thread-id"] as? String == "t")
        #expect(object["z"] as? String == "1")
        #expect((object["herald"] as? [String: String])?["msg_id"] == "m2")
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix(#"{"aps":{"alert":"hi","badge":7,"thread-id":"t"},"herald":"#))
    }

    @Test func recallCommandsListTheirIdentifiers() throws {
        let device = try Self.parse(PushRendering.deviceRecall(commandID: "c", identifiers: ["a", Self.awkward]))
        #expect(device["identifiers"] as? [String] == ["a", Self.awkward])
        let apns = try Self.parse(PushRendering.apnsRecall(commandID: "c", identifiers: ["a"]))
        #expect((apns["aps"] as? [String: Int])?["content-available"] == 1)
        #expect(apns["herald-recall"] as? [String] == ["a"])
    }

    private static func push(_ json: String) throws -> Push {
        try JSONDecoder().decode(PushRequest.self, from: Data(json.utf8)).validated()
    }

    private static func quoted(_ string: String) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: string, options: .fragmentsAllowed), as: UTF8.self)
    }

    private static func parse(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }
}
