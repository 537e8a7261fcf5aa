import Testing

@testable import HeraldCore

/// One rule for the text Herald stores: no NUL, in a JSON body or a request's target.
@Suite struct StoredTextTests {
    @Test func aNULAnywhereInABodyIsRefusedNamingItsField() {
        for (json, field) in [
            (#"{"actions": [{"identifier": "a", "title": "x\u0000"}]}"#, "actions[0].title"),
            (#"{"callback": {"url": "https://e.x", "params": {"k": "v\u0000"}}}"#, "callback.params.k"),
            (#"{"intent_identifiers": ["a", "\u0000"]}"#, "intent_identifiers[1]"),
            (#"{"a": {"k\u0000": 1}}"#, "a"),
            (#""\u0000""#, "body"),
        ] {
            let error = #expect(throws: HeraldError.self, "\(json)") { try StoredText.checkNoNUL(Array(json.utf8)) }
            #expect(error == .invalidField(field, "must not contain U+0000 (NUL)"), "\(json)")
        }
    }

    @Test func aBodyWithoutNULPasses() throws {
        // An escaped backslash before u0000 is text, not a NUL.
        for json in [#"{"a": "\\u0000"}"#, #"{"a": "\u0001"}"#, #"{"a": 1}"#, "not json \\u0000"] {
            try StoredText.checkNoNUL(Array(json.utf8))
        }
    }

    @Test func anEncodedNULInTheTargetIsRefusedNamingTheParameter() throws {
        #expect(throws: HeraldError.invalidField("path", "must not contain U+0000 (NUL, %00)")) {
            try StoredText.checkNoNUL(target: "/v3/aliases/a%00b")
        }
        #expect(throws: HeraldError.invalidField("msg_ids", "must not contain U+0000 (NUL, %00)")) {
            try StoredText.checkNoNUL(target: "/v3/received?x=1&msg_ids=1%00")
        }
        try StoredText.checkNoNUL(target: "/v3/aliases/a%30%30b?page=%2500")
    }
}
