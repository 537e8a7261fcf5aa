import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@Suite struct LimitTests {
    @Test func tagsAndAliasesOver40BytesAreRefused() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let device = try await api.registerDevice(app)
            let long = String(repeating: "t", count: 41)
            let tag = try await api.send(.post, "/v3/devices/\(device.registrationID)", auth: app.auth, json: #"{"tags": {"add": ["\#(long)"]}}"#)
            #expect(tag.status == 400)
            #expect(tag.errorCode == HeraldError.Code.limitExceeded.rawValue)
            #expect(tag.errorMessage?.contains("at most 40 bytes") == true)
            let alias = try await api.send(.post, "/v3/devices/\(device.registrationID)", auth: app.auth, json: #"{"alias": "\#(long)"}"#)
            #expect(alias.errorCode == HeraldError.Code.limitExceeded.rawValue)
        }
    }

    @Test func atMost100TagsPerChange() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let device = try await api.registerDevice(app)
            let tags = (0...100).map { "\"t\($0)\"" }.joined(separator: ",")
            let reply = try await api.send(.post, "/v3/devices/\(device.registrationID)", auth: app.auth, json: #"{"tags": {"add": [\#(tags)]}}"#)
            #expect(reply.errorCode == HeraldError.Code.limitExceeded.rawValue)
            #expect(reply.errorMessage == "tags.add: at most 100 per request (got 101)")
            let stored = try await api.store.api.devices.find(
                appID: try #require(await api.store.api.app(appKey: app.appKey)).id,
                registrationID: device.registrationID
            )
            #expect(stored?.tags == [])
        }
    }

    @Test func atMost1000TagsPerDeviceAndTheChangeThatWouldPassItChangesNothing() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let device = try await api.registerDevice(app)
            for batch in 0..<10 {
                let tags = (0..<100).map { "\"t\(batch)-\($0)\"" }.joined(separator: ",")
                let reply = try await api.send(.post, "/v3/devices/\(device.registrationID)", auth: app.auth, json: #"{"tags": {"add": [\#(tags)]}}"#)
                #expect(reply.status == 200)
            }
            let over = try await api.send(
                .post,
                "/v3/devices/\(device.registrationID)",
                auth: app.auth,
                json: #"{"tags": {"add": ["one-more"]}, "alias": "set-in-the-same-request"}"#
            )
            #expect(over.status == 400)
            #expect(over.errorCode == HeraldError.Code.limitExceeded.rawValue)
            #expect(over.errorMessage?.contains("at most 1000 tags") == true)
            let after = try await api.send(.get, "/v3/devices/\(device.registrationID)", auth: app.auth)
            #expect(try after.strings("tags").count == 1000)
            #expect(try after.json["alias"] is NSNull)
        }
    }

    @Test func anAliasIsSharedByAtMost10Devices() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            var devices: [TestDevice] = []
            for _ in 0..<11 { devices.append(try await api.registerDevice(app)) }
            for device in devices.prefix(10) {
                let reply = try await api.send(.post, "/v3/devices/\(device.registrationID)", auth: app.auth, json: #"{"alias": "family"}"#)
                #expect(reply.status == 200)
            }
            // Setting it again on a device that already has it is not an eleventh device.
            #expect(
                try await api.send(.post, "/v3/devices/\(devices[0].registrationID)", auth: app.auth, json: #"{"alias": "family"}"#).status == 200
            )
            let eleventh = try await api.send(.post, "/v3/devices/\(devices[10].registrationID)", auth: app.auth, json: #"{"alias": "family"}"#)
            #expect(eleventh.errorCode == HeraldError.Code.limitExceeded.rawValue)
            #expect(eleventh.errorMessage == "alias: an alias may be set on at most 10 devices")
            let alias = try await api.send(.get, "/v3/aliases/family", auth: app.auth)
            #expect(try alias.strings("registration_ids").count == 10)
        }
    }

    @Test func concurrentAliasChangesNeverPassTheLimit() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            var devices: [TestDevice] = []
            for _ in 0..<16 { devices.append(try await api.registerDevice(app)) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for device in devices {
                    group.addTask {
                        try await api.send(.post, "/v3/devices/\(device.registrationID)", auth: app.auth, json: #"{"alias": "race"}"#)
                    }
                }
                try await group.waitForAll()
            }
            let alias = try await api.send(.get, "/v3/aliases/race", auth: app.auth)
            #expect(try alias.strings("registration_ids").count == 10)
        }
    }

    @Test func bulkTagCallsTakeAtMost1000IDs() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let ids = (0...1000).map { _ in "\"\(unknownRegistrationID())\"" }.joined(separator: ",")
            let reply = try await api.send(.post, "/v3/tags/big", auth: app.auth, json: #"{"registration_ids": {"add": [\#(ids)]}}"#)
            #expect(reply.errorCode == HeraldError.Code.limitExceeded.rawValue)
            #expect(reply.errorMessage?.hasPrefix("registration_ids.add: at most 1000") == true)
        }
    }

    @Test func bodiesOverTheLimitAre413() async throws {
        try await APITest.run(maxBodySize: 4096) { api in
            let app = try await api.createApp()
            let device = try await api.registerDevice(app)
            let padding = String(repeating: "x", count: 5000)
            let reply = try await api.send(.post, "/v3/devices/\(device.registrationID)", auth: app.auth, json: #"{"alias": "\#(padding)"}"#)
            #expect(reply.status == 413)
            #expect(reply.errorCode == HeraldError.Code.payloadTooLarge.rawValue)
        }
    }
}
