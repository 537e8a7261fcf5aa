import HeraldCore
import Testing

@Suite struct ValidationTests {
    @Test func labelsUpTo40BytesAreAccepted() throws {
        #expect(try Validation.label(String(repeating: "a", count: 40), field: "tag").utf8.count == 40)
        // 13 three-byte characters: 39 bytes.
        #expect(try Validation.label(String(repeating: "标", count: 13), field: "tag").utf8.count == 39)
    }

    @Test func labelOver40BytesNamesTheLimit() {
        #expect(throws: HeraldError.limit("tag", "at most 40 bytes (got 42)")) {
            try Validation.label(String(repeating: "标", count: 14), field: "tag")
        }
    }

    @Test func emptyAndControlCharacterLabelsAreInvalid() {
        #expect(throws: HeraldError.invalidField("alias", "must not be empty")) { try Validation.label("", field: "alias") }
        #expect(throws: HeraldError.invalidField("alias", "must not contain control characters")) {
            try Validation.label("a\nb", field: "alias")
        }
    }

    @Test func labelListsAreDeduplicatedAndLimited() throws {
        #expect(try Validation.labels(["a", "b", "a"], field: "tags.add", max: 100) == ["a", "b"])
        let error = #expect(throws: HeraldError.self) {
            try Validation.labels((0...100).map { "t\($0)" }, field: "tags.add", max: 100)
        }
        #expect(error?.code == .limitExceeded)
        #expect(error?.message.contains("at most 100") == true)
    }

    @Test func apnsTokensAreHexAndLowercased() throws {
        #expect(try Validation.apnsToken(String(repeating: "AB", count: 32), field: "apns_token") == String(repeating: "ab", count: 32))
        #expect(throws: HeraldError.self) { try Validation.apnsToken("xyz", field: "apns_token") }
        #expect(throws: HeraldError.self) { try Validation.apnsToken("abc", field: "apns_token") }
        #expect(throws: HeraldError.self) { try Validation.apnsToken("abcd", field: "apns_token") }
    }

    @Test func registrationIDsMustHaveTheirShape() throws {
        let id = Identifiers.newRegistrationID()
        #expect(try Validation.registrationIDs([id, id], field: "ids") == [id])
        #expect(throws: HeraldError.invalidField("ids[1]", "not a registration id")) {
            try Validation.registrationIDs([id, "nope"], field: "ids")
        }
    }

    @Test func generatedIdentifiersHaveTheDocumentedShapes() {
        #expect(Identifiers.isAppKey(Identifiers.newAppKey()))
        #expect(Identifiers.isRegistrationID(Identifiers.newRegistrationID()))
        #expect(Identifiers.newMasterSecret().count == 40)
        #expect(Identifiers.newDeviceSecret().count == 32)
        #expect(!Identifiers.isAppKey("ZZ" + String(repeating: "0", count: 22)))
        // Registration ids fit the 23-byte client id every MQTT 3.1.1 server accepts.
        #expect(Identifiers.registrationIDLength <= 23)
    }

    @Test func everyErrorCodeHasAStatusAndAName() {
        let names = Set(HeraldError.Code.allCases.map(\.name))
        #expect(names.count == HeraldError.Code.allCases.count)
        for code in HeraldError.Code.allCases {
            #expect((400...599).contains(code.httpStatus))
        }
    }
}
