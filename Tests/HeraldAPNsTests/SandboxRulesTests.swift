import Crypto
import Foundation
import Testing

@testable import HeraldAPNsSandbox

@Suite("Sandbox validation order")
struct SandboxRulesTests {
    private func request(_ headers: [String: String], method: String = "POST", path: String = "/3/device/abcd", body: String = "{}") -> SandboxRequest
    {
        SandboxRequest(method: method, path: path, headers: headers.map { ($0.key, $0.value) }, body: Array(body.utf8))
    }

    private func reason(_ state: inout SandboxState, _ request: SandboxRequest) -> String? {
        var connection = SandboxConnectionAuth(connectionID: 1)
        guard case .respond(let response) = state.handle(request, connection: &connection, now: Date()).action else { return nil }
        return response.reason
    }

    @Test func checksFollowApplesOrder() {
        var state = SandboxState(configuration: .init())
        let valid = ["apns-topic": "com.example.app", "apns-push-type": "alert"]
        #expect(reason(&state, request(valid.merging(["apns-id": "nope"]) { $1 }, method: "GET")) == "BadMessageId")
        #expect(reason(&state, request(valid, method: "GET")) == "MethodNotAllowed")
        #expect(reason(&state, request(["apns-push-type": "alert"])) == "MissingTopic")
        #expect(reason(&state, request(valid.merging(["apns-collapse-id": String(repeating: "x", count: 65)]) { $1 })) == "BadCollapseId")
        #expect(reason(&state, request(valid.merging(["apns-priority": "7"]) { $1 })) == "BadPriority")
        #expect(reason(&state, request(valid.merging(["apns-push-type": "fax"]) { $1 })) == "InvalidPushType")
        #expect(reason(&state, request(valid, path: "/4/device/abcd")) == "BadPath")
        #expect(reason(&state, request(valid, path: "/3/device/")) == "MissingDeviceToken")
        #expect(reason(&state, request(valid, path: "/3/device/xyz1")) == "BadDeviceToken")
        state.unregistered["abcd"] = Date(timeIntervalSince1970: 0)
        #expect(reason(&state, request(valid)) == "Unregistered")
        state.unregistered = [:]
        #expect(reason(&state, request(valid)) == "MissingProviderToken")
        #expect(reason(&state, request(valid.merging(["authorization": "bearer a.b.c"]) { $1 })) == "InvalidProviderToken")
    }

    @Test func tokenChangeWithinTwentyMinutesOnAConnectionIsChurn() throws {
        var state = SandboxState(configuration: .init())
        let key = P256.Signing.PrivateKey()
        state.keys["K"] = SandboxState.RegisteredKey(teamID: "T", publicKey: key.publicKey)
        let start = Date()
        func jwt(_ iat: Date) throws -> String {
            func encode(_ text: String) -> String {
                Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                    .replacingOccurrences(of: "=", with: "")
            }
            let input = encode(#"{"alg":"ES256","kid":"K"}"#) + "." + encode(#"{"iss":"T","iat":\#(Int(iat.timeIntervalSince1970))}"#)
            let signature = try key.signature(for: Data(input.utf8)).rawRepresentation.base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            return input + "." + signature
        }
        var connection = SandboxConnectionAuth(connectionID: 1)
        func send(_ token: String, at now: Date) -> SandboxResponse? {
            let headers = ["apns-topic": "com.example.app", "apns-push-type": "alert", "authorization": "bearer \(token)"]
            guard case .respond(let response) = state.handle(request(headers), connection: &connection, now: now).action else { return nil }
            return response
        }
        let first = try jwt(start)
        #expect(send(first, at: start)?.status == 200)
        let second = try jwt(start.addingTimeInterval(60))
        #expect(send(second, at: start.addingTimeInterval(60))?.reason == "TooManyProviderTokenUpdates")
        #expect(send(second, at: start.addingTimeInterval(21 * 60))?.status == 200)
        #expect(send(second, at: start.addingTimeInterval(2 * 3600))?.reason == "ExpiredProviderToken")
    }
}
