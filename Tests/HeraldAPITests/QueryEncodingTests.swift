import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@Suite struct QueryEncodingTests {
    /// A form-encoded query writes a space as "+": `msg_ids` with spaces around its commas
    /// reads the same either way (schemathesis sent one; it was refused as not a message id).
    @Test func spacesInMessageIDListsMayBeWrittenAsPlus() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let one = String(repeating: "a", count: 24)
            let two = String(repeating: "b", count: 24)
            for query in ["\(one),\(two)", "\(one)+,+\(two)", "\(one)%20,%09\(two)+", "+\(one)"] {
                let reply = try await api.send(.get, "/v3/report/received?msg_ids=\(query)", auth: app.auth)
                #expect(reply.status == 200, "\(query) → \(reply.body)")
                #expect(reply.body == #"{"reports":[]}"#, "\(query)")
            }
            // A plus inside an id is still not an id.
            let bad = try await api.send(.get, "/v3/report/received?msg_ids=\(one.dropLast())+a", auth: app.auth)
            #expect(bad.status == 400)
            #expect(bad.errorCode == HeraldError.Code.invalidField.rawValue)
        }
    }
}
