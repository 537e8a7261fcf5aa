import Foundation
import Testing

@testable import HeraldAPNsSandbox

/// The sandbox holds Live Activity pushes to Apple's rules: push type and topic suffix go
/// together, the payload has what ActivityKit needs, and a known token takes only its kind.
@Suite struct LiveActivitySandboxTests {
    private static let topic = "com.example.app.push-type.liveactivity"
    private static let token = "abcd"

    private func answer(
        _ state: inout SandboxState,
        pushType: String = "liveactivity",
        topic: String = topic,
        aps: String
    ) -> (status: Int, reason: String?) {
        let request = SandboxRequest(
            method: "POST",
            path: "/3/device/\(Self.token)",
            headers: [("apns-topic", topic), ("apns-push-type", pushType), ("apns-priority", "10")],
            body: Array(#"{"aps":\#(aps)}"#.utf8)
        )
        // A certificate connection: no provider token to make.
        var connection = SandboxConnectionAuth(connectionID: 1, clientCertificateDER: [1])
        switch state.handle(request, connection: &connection, now: Date()).action {
        case .respond(let response): return (response.status, response.reason)
        default: return (0, nil)
        }
    }

    private static let update = #"{"timestamp":1700000000,"event":"update","content-state":{"eta":5}}"#
    private static let start =
        #"{"timestamp":1700000000,"event":"start","content-state":{"eta":5},"attributes-type":"Order","attributes":{"id":"1"}}"#

    @Test func aWellFormedUpdateAndStartAreAccepted() {
        var state = SandboxState(configuration: .init())
        #expect(answer(&state, aps: Self.update).status == 200)
        #expect(answer(&state, aps: Self.start).status == 200)
        #expect(state.records.map(\.pushType) == ["liveactivity", "liveactivity"])
    }

    @Test func theTopicMustSuitThePushType() {
        var state = SandboxState(configuration: .init())
        #expect(answer(&state, topic: "com.example.app", aps: Self.update) == (400, "BadTopic"))
        #expect(answer(&state, pushType: "alert", aps: #"{"alert":"hi"}"#) == (400, "BadTopic"))
        #expect(state.records.isEmpty)
    }

    @Test func aPayloadTheDeviceWouldDropIsRefused() {
        var state = SandboxState(configuration: .init())
        let reason = SandboxState.invalidPayloadReason
        for aps in [
            #"{"event":"update","content-state":{}}"#,  // no timestamp
            #"{"timestamp":1,"content-state":{}}"#,  // no event
            #"{"timestamp":1,"event":"pause","content-state":{}}"#,  // no such event
            #"{"timestamp":1,"event":"update"}"#,  // an update without content-state
            #"{"timestamp":1,"event":"start","content-state":{},"attributes":{}}"#,  // no attributes-type
            #"{"timestamp":1,"event":"start","content-state":{},"attributes-type":"Order"}"#,  // no attributes
        ] {
            #expect(answer(&state, aps: aps) == (400, reason), "\(aps)")
        }
        // An end may leave the content as it is.
        #expect(answer(&state, aps: #"{"timestamp":1,"event":"end"}"#).status == 200)
    }

    @Test func aKnownTokenTakesOnlyItsKind() {
        var state = SandboxState(configuration: .init())
        state.deviceTopics[Self.token] = "com.example.app"
        state.liveActivityTokens[Self.token] = .pushToStart
        #expect(answer(&state, aps: Self.update) == (400, "DeviceTokenNotForTopic"))
        #expect(answer(&state, aps: Self.start).status == 200)
        // An ordinary device token takes no Live Activity push, and an ActivityKit token no alert.
        #expect(answer(&state, pushType: "alert", topic: "com.example.app", aps: #"{"alert":"hi"}"#) == (400, "DeviceTokenNotForTopic"))
        state.liveActivityTokens = [:]
        #expect(answer(&state, aps: Self.start) == (400, "DeviceTokenNotForTopic"))
        // A token issued for another app's bundle.
        state.deviceTopics[Self.token] = "com.example.other"
        #expect(answer(&state, aps: Self.start) == (400, "DeviceTokenNotForTopic"))
    }
}
