import Foundation
import HeraldCore
import Testing

/// `PushRequest.fastRead` reads the usual push bodies as JSONDecoder does, and anything it
/// reads at all, it reads as JSONDecoder does: it never accepts a body JSONDecoder refuses.
@Suite struct FastReadingTests {
    static let rich = """
        {"platform":["android","ios"],"audience":{"registration_id":["r1","r2"],"alias":["al"],"tag":["t1","t2"],"tag_and":["t3"],"tag_not":["t4"]},
         "notification":{"alert":"common","ios":{"alert":{"title":"T","subtitle":"S","body":"B","loc-key":"L","loc-args":["a","b"],
           "title-loc-key":"TL","title-loc-args":[],"subtitle-loc-key":"SL","subtitle-loc-args":["s"],"launch-image":"i.png",
           "action-loc-key":"A"},"sound":"s.caf","badge":"-2",
           "thread-id":"th","category":"cat","content-available":1,"mutable-content":false,"interruption-level":"passive",
           "extras":{"k":"v","k2":-7,"k3":{"n":[true,false,0]}},"push_type":"voip"},
           "android":{"alert":"a","title":"t","builder_id":1,"priority":-2,"style":3,"extras":{"id":1},"intent":{"url":"u"}},
           "voip":{"call":{"id":2}},"hmos":{"alert":"h"},"quickapp":{"page":"/p"}},
         "message":{"msg_content":"hello","title":"in-app","content_type":"text","extras":{"a":"b","n":1}},
         "inapp_message":{"inapp_message":true},"notification_3rd":{"title":"t"},
         "sms_message":{"delay_time":60,"temp_id":1250,"temp_para":{"code":"1"}},
         "live_activity":{"ios":{"event":"update","content-state":{"eta":5}}},
         "callback":{"url":"https://e.com","params":{"p":1},"type":3},
         "options":{"time_to_live":0,"identifier":"id-1","replace":"id-0","apns_production":true,"priority":5,"sendno":-18,
           "apns_collapse_id":"c","override_msg_id":123,"big_push_duration":10,"classification":1,"third_party_channel":{"xiaomi":{}}},
         "cid":"c-1"}
        """

    static let usual = [
        rich,
        #"{"audience":{"registration_id":["0123456789abcdef0123"]},"message":{"msg_content":"1764000000000000000"}}"#,
        #"{"audience":"all","notification":{"alert":"Hello"}}"#,
        #" { "audience" : { "tag" : [ "news" , "sport" ] } , "notification" : { "ios" : { "alert" : "x" , "badge" : 7 } } } "#,
        #"{"audience":{"alias":["alice"]},"notification":{"ios":{"alert":{},"badge":"+3","sound":"default"}},"options":{}}"#,
        #"{"audience":{"tag":[]},"message":{"msg_content":""},"options":{"time_to_live":864000,"priority":-0}}"#,
        #"{"audience":{"alias":["ünïcødé 推送 📣"]},"message":{"msg_content":"推送 / slash ' quote","extras":{}}}"#,
        "{\"audience\":\"all\",\n\t\"notification\":{\"alert\":\"new lines between fields\"}}",
        #"{"platform":"all","audience":"all","notification":{"alert":"Hi, JPush!"}}"#,
        #"{"platform":["ios"],"audience":"all","notification":{"ios":{"badge":"5","content-available":0,"alert":"x"}},"options":{"override_msg_id":"m"}}"#,
    ]

    @Test(arguments: usual)
    func theUsualBodiesAreReadAsJSONDecoderReadsThem(_ body: String) throws {
        let decoded = try JSONDecoder().decode(PushRequest.self, from: Data(body.utf8))
        let fast = Self.fastRead(Array(body.utf8))
        #expect(fast != nil)
        #expect(fast == decoded)
    }

    static let unusual = [
        #"{"audience":"all","notification":{"alert":"a \"quoted\" word"}}"#,  // escapes: left to JSONDecoder
        #"{"audience":"all","notification":{"alert":null}}"#,
        #"{"audience":"all","audience":{"tag":["t"]},"notification":{"alert":"a"}}"#,
        #"{"audience":"all","notification":{"alert":"a"},"extra":1}"#,
        #"{"audience":"everyone","notification":{"alert":"a"}}"#,
        #"{"audience":{"tags":["t"]},"notification":{"alert":"a"}}"#,
        #"{"audience":"all","message":{"title":"no content"}}"#,
        #"{"audience":"all","message":{"msg_content":"m","extras":{"k":"v","k":"w"}}}"#,
        #"{"audience":"all","notification":{"ios":{"badge":-1}}}"#,
        #"{"audience":"all","notification":{"ios":{"badge":1.0}}}"#,
        #"{"audience":"all","notification":{"ios":{"badge":"+100000"}}}"#,
        #"{"audience":"all","notification":{"ios":{"badge":"++5"}}}"#,
        #"{"audience":"all","notification":{"ios":{"badge":"5x"}}}"#,
        #"{"audience":"all","notification":{"ios":{"alert":"a","extras":{"k":null}}}}"#,
        #"{"audience":"all","notification":{"ios":{"alert":"a","extras":{"k":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}}}}"#,
        #"{"audience":"all","notification":{"ios":{"alert":"a","sound":{"critical":1,"name":"n"}}}}"#,
        #"{"audience":"all","notification":{"android":{"alert":"a","priority":3}}}"#,
        #"{"audience":"all","notification":{"alert":"a"},"options":{"sendno":"1"}}"#,
        #"{"audience":"all","notification":{"alert":"a"},"options":{"override_msg_id":1.5}}"#,
        #"{"platform":"android","audience":"all","notification":{"alert":"a"}}"#,
        #"{"audience":"all","notification":{"ios":{"push_type":"loud"}}}"#,
        #"{"audience":"all","notification":{"ios":{"content-available":1}}}"#,
        #"{"audience":"all","notification":{"alert":"a"},"options":{"time_to_live":1e3}}"#,
        #"{"audience":"all","notification":{"alert":"a"},"options":{"time_to_live":01}}"#,
        #"{"audience":"all","notification":{"alert":"a"},"options":{"time_to_live":99999999999999999999}}"#,
        #"{"audience":"all","notification":{"alert":"a"}} x"#,
        #"{"audience":"all","notification":{"alert":"a"},}"#,
        #"[{"audience":"all"}]"#,
        #"{"notification":{"alert":"a"}}"#,
        "{\"audience\":\"all\",\"notification\":{\"alert\":\"tab\there\"}}",
        "\u{FEFF}{\"audience\":\"all\",\"notification\":{\"alert\":\"a\"}}",
        "",
    ]

    @Test(arguments: unusual)
    func whatItReadsAtAllItReadsAsJSONDecoderDoes(_ body: String) {
        Self.expectAgreement(Array(body.utf8))
    }

    /// Every truncation of the rich body, and every byte of it replaced by each of a few
    /// characters that JSON gives meaning to.
    ///
    /// Seconds of work: it yields between positions, so the tests beside it that measure
    /// time (deadlines) get the two threads every test shares in turn.
    @Test func everyTruncationAndOneByteChangeOfABodyIsReadAsJSONDecoderReadsIt() async {
        let bytes = Array(Self.rich.utf8)
        for end in 0..<bytes.count { Self.expectAgreement(Array(bytes[..<end])) }
        for position in bytes.indices {
            await Task.yield()
            for replacement in Array(#"{}[]",: 0-9e.\"#.utf8) + [0x00, 0xFF] {
                var changed = bytes
                changed[position] = replacement
                Self.expectAgreement(changed)
            }
        }
    }

    @Test func invalidUTF8IsNeverRead() {
        var bytes = Array(#"{"audience":"all","notification":{"alert":"ab"}}"#.utf8)
        bytes[bytes.count - 5] = 0xC3
        #expect(Self.fastRead(bytes) == nil)
        Self.expectAgreement(bytes)
    }

    static func fastRead(_ bytes: [UInt8]) -> PushRequest? {
        bytes.withUnsafeBytes(PushRequest.fastRead)
    }

    static func expectAgreement(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        guard let fast = fastRead(bytes) else { return }
        let decoded = try? JSONDecoder().decode(PushRequest.self, from: Data(bytes))
        #expect(decoded == fast, "\(String(decoding: bytes, as: UTF8.self))", sourceLocation: sourceLocation)
    }
}
