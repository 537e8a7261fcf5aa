import Foundation
import Testing

@testable import HeraldCore

/// A JPush body's keys Herald doesn't know: a field newer than Herald is ignored and
/// named; a typo of a field Herald knows is still refused (code 1009).
@Suite struct UnknownFieldsTests {
    private func decode(_ json: String) throws -> (PushRequest, [String]) {
        let unknownFields = UnknownFields()
        let request = try unknownFields.jsonDecoder.decode(PushRequest.self, from: Data(json.utf8))
        return (request, unknownFields.warnings)
    }

    @Test func aNewerFieldIsIgnoredAndNamed() throws {
        let (request, warnings) = try decode(#"{"audience": "all", "notification": {"ai_opportunity": false, "alert": "Hi"}}"#)
        #expect(request.notification?.alert == "Hi")
        #expect(warnings == ["notification.ai_opportunity: not a field Herald knows; ignored"])
        // Nothing of it is stored or sent.
        #expect(!String(decoding: request.storedJSON, as: UTF8.self).contains("ai_opportunity"))
    }

    @Test func newerFieldsAreIgnoredAtEveryLevel() throws {
        let json = #"""
            {"audience": "all", "future": 1, "notification": {"android": {"alert": "a", "group_summary_style": 2},
             "ios": {"alert": {"body": "b", "summary-arg": "x"}, "live_summary": true}}, "options": {"ai_strategy": {}}}
            """#
        let (request, warnings) = try decode(json)
        #expect(request.notification?.android?.fields["group_summary_style"] == nil)
        #expect(
            Set(warnings.map { String($0.prefix { $0 != ":" }) }) == [
                "future", "notification.android.group_summary_style", "notification.ios.alert.summary-arg", "notification.ios.live_summary",
                "options.ai_strategy",
            ]
        )
    }

    @Test func aTypoOfAKnownFieldIsStillRefused() throws {
        for (json, field, meant) in [
            (#"{"audience": "all", "notifcation": {"alert": "Hi"}}"#, "notifcation", "notification"),
            (#"{"audience": "all", "notification": {"alert": "Hi", "iso": {}}}"#, "notification.iso", "ios"),
            (#"{"audience": "all", "notification": {"ios": {"thread_id": "t"}}}"#, "notification.ios.thread_id", "thread-id"),
            (#"{"audience": "all", "notification": {"android": {"titel": "T"}}}"#, "notification.android.titel", "title"),
            (#"{"audience": "all", "message": {"msg_content": "m", "content-type": "x"}}"#, "message.content-type", "content_type"),
            (#"{"audience": "all", "message": {"msg_content": "m"}, "options": {"time_to_lve": 5}}"#, "options.time_to_lve", "time_to_live"),
        ] {
            let error = #expect(throws: HeraldError.self, "\(json)") { try decode(json) }
            #expect(error?.code == .unsupportedKey, "\(json)")
            #expect(error?.message.hasPrefix("\(field): unknown field (did you mean \(meant)?)") == true, "\(error?.message ?? "")")
        }
    }

    @Test func theAudienceStaysStrict() throws {
        // Ignoring a filter would widen who gets the push.
        let error = #expect(throws: HeraldError.self) { try decode(#"{"audience": {"segment_v2": ["x"]}, "message": {"msg_content": "m"}}"#) }
        #expect(error?.code == .unsupportedKey)
    }

    @Test func withoutACollectorEveryUnknownKeyIsRefused() {
        let error = #expect(throws: HeraldError.self) {
            try JSONDecoder().decode(
                PushRequest.self,
                from: Data(#"{"audience": "all", "notification": {"ai_opportunity": false, "alert": "Hi"}}"#.utf8)
            )
        }
        #expect(error?.code == .unsupportedKey)
    }

    @Test func resemblanceIsCaseAndSeparatorBlindAndBoundedByLength() {
        #expect(UnknownFields.resembled("Thread_ID", among: ["thread-id"]) == "thread-id")
        #expect(UnknownFields.resembled("alert_type", among: ["alert"]) == nil)
        #expect(UnknownFields.resembled("ai_opportunity", among: ["alert", "ios", "android", "voip", "hmos", "quickapp", "winphone"]) == nil)
        #expect(UnknownFields.resembled("andriod", among: ["android"]) == "android")
        #expect(UnknownFields.resembled("big_push_durations", among: ["big_push_duration"]) == "big_push_duration")
    }
}
