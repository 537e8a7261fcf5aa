import Foundation
import HTTPTypes
import HeraldCore
import HeraldTestSupport
import Testing

/// A device's language: reported at registration or in an update, shown on GET, checked
/// as a BCP 47 tag.
@Suite struct DeviceLanguageTests {
    @Test func aDeviceReportsItsLanguageAtRegistrationAndChangesOrClearsIt() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let registered = try await api.send(
                .post,
                "/v3/devices",
                json: #"{"app_key": "\#(app.appKey)", "platform": "ios", "language": "zh_Hans_CN"}"#
            )
            #expect(registered.status == 200 || registered.status == 201)
            let id = try registered.string("registration_id")
            #expect(try await api.send(.get, "/v3/devices/\(id)", auth: app.auth).json["language"] as? String == "zh-Hans-CN")
            #expect(try await api.send(.post, "/v3/devices/\(id)", auth: app.auth, json: #"{"language": "en-US"}"#).status == 200)
            #expect(try await api.send(.get, "/v3/devices/\(id)", auth: app.auth).json["language"] as? String == "en-US")
            #expect(try await api.send(.post, "/v3/devices/\(id)", auth: app.auth, json: #"{"language": null}"#).status == 200)
            #expect(try await api.send(.get, "/v3/devices/\(id)", auth: app.auth).json["language"] is NSNull)

            for bad in ["english!", "e", "zh--CN", "toolongsubtag-xxxxxxxxx", ""] where !bad.isEmpty {
                let refused = try await api.send(.post, "/v3/devices/\(id)", auth: app.auth, json: #"{"language": "\#(bad)"}"#)
                #expect(refused.errorCode == HeraldError.Code.invalidField.rawValue, "\(bad): \(refused.body)")
                let atRegistration = try await api.send(
                    .post,
                    "/v3/devices",
                    json: #"{"app_key": "\#(app.appKey)", "platform": "ios", "language": "\#(bad)"}"#
                )
                #expect(atRegistration.errorCode == HeraldError.Code.invalidField.rawValue, "\(bad): \(atRegistration.body)")
            }
        }
    }

    @Test func localizationsAreChecked() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            _ = try await api.registerDevice(app)
            for (localizations, field) in [
                (#"{"zh_Hans": "x"}"#, "notification.ios.localizations.zh_Hans"),
                (#"{"!": "x"}"#, "notification.ios.localizations.!"),
                (#"{}"#, "notification.ios.localizations"),
            ] {
                let answer = try await api.send(
                    .post,
                    "/v3/push",
                    auth: app.auth,
                    json: #"{"audience": "all", "notification": {"ios": {"alert": "hi", "localizations": \#(localizations)}}}"#
                )
                #expect(answer.errorCode == HeraldError.Code.invalidField.rawValue, "\(localizations): \(answer.body)")
                #expect(answer.body.contains(field), "\(localizations): \(answer.body)")
            }
            // Each language's payload is held to APNs' limit.
            let big = String(repeating: "字", count: 1400)
            let tooLarge = try await api.send(
                .post,
                "/v3/push",
                auth: app.auth,
                json: #"{"audience": "all", "notification": {"ios": {"alert": "hi", "localizations": {"zh": "\#(big)"}}}}"#
            )
            #expect(tooLarge.errorCode == HeraldError.Code.payloadTooLarge.rawValue, "\(tooLarge.body)")
        }
    }
}
