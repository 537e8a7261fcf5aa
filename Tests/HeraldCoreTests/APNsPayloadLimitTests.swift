import Foundation
import Testing

@testable import HeraldCore

/// A push whose APNs payload APNs would refuse is refused at acceptance, and a notification
/// that only wakes the app goes as a background push.
@Suite struct APNsPayloadLimitTests {
    private func request(_ json: String) throws -> PushRequest {
        try JSONDecoder().decode(PushRequest.self, from: Data(json.utf8))
    }

    private func sizeError(_ json: String) throws -> HeraldError? {
        let request = try request(json)
        return #expect(throws: HeraldError.self) { try request.validated() }
    }

    @Test(arguments: [
        // An iOS alert of 5,000 bytes.
        #"{"audience":"all","notification":{"ios":{"alert":"\#(String(repeating: "x", count: 5000))"}}}"#,
        // A top-level alert of exactly 4,096 bytes: allowed as a field, too large as a payload.
        #"{"audience":"all","notification":{"alert":"\#(String(repeating: "x", count: 4096))"}}"#,
        // 4,500 bytes of extras beside a short alert.
        #"{"audience":"all","notification":{"ios":{"alert":"hi","extras":{"k":"\#(String(repeating: "e", count: 4500))"}}}}"#,
    ])
    func aPayloadOverAPNsLimitIsRefusedSayingByHowMuch(_ json: String) throws {
        let error = try sizeError(json)
        #expect(error?.code == .payloadTooLarge)
        #expect(error?.code.httpStatus == 413)
        let message = try #require(error?.message)
        #expect(message.hasPrefix("notification: the APNs payload would be "))
        #expect(message.contains("over APNs' limit of 4096"))
        // The figures add up: size - limit = excess.
        let numbers = message.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        #expect(numbers.count >= 3 && numbers[0] - 4096 == numbers[1])
    }

    @Test func thePayloadAtTheLimitIsAcceptedAndOneByteMoreIsNot() throws {
        // Find the alert length whose largest payload is exactly 4,096 bytes.
        func push(_ length: Int) throws -> PushRequest {
            try request(#"{"audience":"all","notification":{"ios":{"alert":"\#(String(repeating: "y", count: length)))","badge":"+1"}}}"#)
        }
        let overhead = PushRendering.apnsPayloadSizeBound(try push(0).validated())
        let fitting = try push(4096 - overhead).validated()
        #expect(PushRendering.apnsPayloadSizeBound(fitting) == 4096)
        // The bound is what the center sends at most: the rendering with a real id and badge.
        let real = PushRendering.apnsPayload(
            fitting,
            msgID: Identifiers.msgID(milliseconds: 1_764_000_000_000, node: 1023, sequence: 4095),
            badge: 99
        )
        #expect(real.count <= 4096)
        #expect(throws: HeraldError.self) { try push(4096 - overhead + 1).validated() }
    }

    @Test func theQuickBoundIsNeverBelowTheRenderedSize() throws {
        // Every field set, with the largest badge, and strings that escape to 6 bytes a byte.
        let control = String(repeating: "\u{01}", count: 40)
        let bodies = [
            #"{"audience":"all","notification":{"ios":{"alert":{"title":"","subtitle":"","body":""},"sound":"","badge":9223372036854775807,"thread-id":"","category":"","content-available":true,"mutable-content":true,"interruption-level":"time-sensitive","extras":{"":""}}},"options":{"identifier":"\#(String(repeating: "i", count: 64))"}}"#,
            #"{"audience":"all","notification":{"ios":{"alert":"a","badge":"+99999","extras":{"a":"","b":"","c":"","d":""}}}}"#,
        ]
        var pushes = try bodies.map { try request($0).validated() }
        var escaped = pushes[0]
        var alert = IOSAlert(title: control, subtitle: control, body: control)
        alert.locKey = control
        alert.locArgs = [control, control]
        escaped.notification?.ios?.alert = .parts(alert)
        escaped.notification?.ios?.sound = .critical(CriticalSound(name: control, volume: 0.123456789))
        escaped.notification?.ios?.extras = [
            control: .string(control), "n": .array([.double(-1.5e300), .int(Int64.min), .null, .object([control: true])]),
        ]
        pushes.append(escaped)
        for push in pushes {
            #expect(PushRendering.apnsPayloadQuickBound(push) >= PushRendering.apnsPayloadSizeBound(push))
        }
    }

    @Test func voipPushesHaveTheirLargerLimit() throws {
        let extras = String(repeating: "v", count: 4600)
        let voip = try request(#"{"audience":"all","notification":{"ios":{"alert":"call","push_type":"voip","extras":{"k":"\#(extras)"}}}}"#)
        #expect(try voip.validated().pushType == .voip)
        let alert = try request(#"{"audience":"all","notification":{"ios":{"alert":"call","extras":{"k":"\#(extras)"}}}}"#)
        let error = #expect(throws: HeraldError.self) { try alert.validated() }
        #expect(error?.message.contains("limit of 4096 bytes for alert pushes") == true)
    }

    @Test func escapesCountAsTheyAreSent() throws {
        // 1,500 quotes are 3,000 bytes once escaped.
        let quotes = String(repeating: #"\""#, count: 1500)
        #expect(throws: Never.self) { try request(#"{"audience":"all","notification":{"ios":{"alert":"\#(quotes)"}}}"#).validated() }
        let more = String(repeating: #"\""#, count: 2100)
        #expect(throws: HeraldError.self) { try request(#"{"audience":"all","notification":{"ios":{"alert":"\#(more)"}}}"#).validated() }
    }

    @Test func aContentAvailableOnlyNotificationIsABackgroundPush() throws {
        let push = try request(#"{"audience":"all","notification":{"ios":{"content-available":true,"extras":{"k":"v"}}}}"#).validated()
        #expect(push.pushType == .background)
        let payload = try JSONSerialization.jsonObject(with: Data(PushRendering.apnsPayload(push, msgID: "m"))) as? [String: Any]
        #expect((payload?["aps"] as? [String: Any])?["content-available"] as? Int == 1)
        #expect((payload?["aps"] as? [String: Any])?["alert"] == nil)
    }

    @Test func contentAvailableWithSomethingToShowStaysAnAlert() throws {
        for json in [
            #"{"audience":"all","notification":{"ios":{"content-available":true,"alert":"hi"}}}"#,
            #"{"audience":"all","notification":{"alert":"hi","ios":{"content-available":true}}}"#,
            #"{"audience":"all","notification":{"ios":{"content-available":true,"badge":3}}}"#,
            #"{"audience":"all","notification":{"ios":{"content-available":true,"sound":"ping"}}}"#,
        ] {
            #expect(try request(json).validated().pushType == .alert, "\(json)")
        }
    }

    @Test func anAlertPushTypeWithOnlyContentAvailableIsRefused() throws {
        let error = try sizeError(#"{"audience":"all","notification":{"ios":{"content-available":true,"push_type":"alert"}}}"#)
        #expect(error?.code == .invalidField)
        #expect(error?.message.hasPrefix("notification.ios.push_type: ") == true)
    }
}
