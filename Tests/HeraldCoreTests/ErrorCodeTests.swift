import HeraldCore
import Testing

/// Herald's error codes against JPush's published tables (docs/errors.md cites them): a
/// JPush client that switches on a code must read Herald's answer as JPush meant it.
@Suite struct ErrorCodeTests {
    /// JPush's Push API v3 codes Herald answers, with the HTTP status JPush gives them
    /// (1005 aside: JPush answers it 400, Herald 413).
    @Test func theConditionsJPushHasCarryJPushsNumbers() {
        let jpush: [(HeraldError.Code, Int, Int)] = [
            (.internalError, 1000, 500),
            (.methodNotAllowed, 1001, 405),
            (.missingField, 1002, 400),
            (.invalidField, 1003, 400),
            (.unauthorized, 1004, 401),
            (.payloadTooLarge, 1005, 413),
            (.appNotFound, 1008, 404),
            (.unsupportedKey, 1009, 400),
            (.noAudienceMatch, 1011, 400),
            (.unavailable, 1030, 503),
            (.tooManyRequests, 2002, 429),
            (.forbidden, 2004, 403),
            // JPush's Schedule API table.
            (.invalidSchedule, 8100, 400),
            (.scheduleNotFound, 8104, 404),
        ]
        for (code, number, status) in jpush {
            #expect(code.rawValue == number, "\(code.name)")
            #expect(code.httpStatus == status, "\(code.name)")
            #expect(code.isJPush, "\(code.name)")
        }
        #expect(HeraldError.Code.allCases.filter(\.isJPush).count == jpush.count)
    }

    /// Herald's own codes stay out of every number a JPush API documents (1000–1030,
    /// 2001–2007 in the Push API, 3001–3005 in the Report API, 7000–7030 in the Device
    /// API, 8000–8203 in the Schedule API).
    @Test func heraldsOwnCodesAreIn9xxx() {
        for code in HeraldError.Code.allCases where !code.isJPush {
            #expect((9000..<10000).contains(code.rawValue), "\(code.name) is \(code.rawValue)")
            #expect((400..<600).contains(code.httpStatus), "\(code.name)")
        }
    }

    @Test func numbersAndNamesAreUnique() {
        let codes = HeraldError.Code.allCases
        #expect(Set(codes.map(\.rawValue)).count == codes.count)
        #expect(Set(codes.map(\.name)).count == codes.count)
    }
}
