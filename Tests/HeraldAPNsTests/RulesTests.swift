import Crypto
import Foundation
import Testing

@testable import HeraldAPNs

@Suite("Provider rules without sockets")
struct RulesTests {
    private let id = UUID()

    @Test func everyResponseClassMapsToItsAction() {
        func classify(_ status: Int, _ reason: String?, _ timestamp: Date? = nil) -> APNsResponseAction {
            APNsResponseClassifier.classify(status: status, reason: reason.map(APNsReason.init), timestamp: timestamp, apnsID: id)
        }
        let since = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(classify(200, nil) == .outcome(.delivered(apnsID: id)))
        #expect(classify(400, "BadDeviceToken") == .outcome(.invalidToken(reason: .badDeviceToken, since: nil)))
        #expect(classify(410, "Unregistered", since) == .outcome(.invalidToken(reason: .unregistered, since: since)))
        #expect(classify(410, "ExpiredToken") == .outcome(.invalidToken(reason: .expiredToken, since: nil)))
        #expect(classify(400, "BadCollapseId") == .outcome(.failed(reason: .badCollapseId, status: 400)))
        #expect(classify(400, "DeviceTokenNotForTopic") == .outcome(.failed(reason: .deviceTokenNotForTopic, status: 400)))
        #expect(classify(400, "IdleTimeout") == .retryElsewhere(reason: .idleTimeout, refreshToken: false, retireConnection: true))
        #expect(classify(403, "ExpiredProviderToken") == .retryElsewhere(reason: .expiredProviderToken, refreshToken: true, retireConnection: true))
        #expect(
            classify(403, "UnrelatedKeyIdInToken") == .retryElsewhere(reason: .unrelatedKeyIdInToken, refreshToken: false, retireConnection: true)
        )
        for reason in ["InvalidProviderToken", "MissingProviderToken", "BadCertificate", "BadCertificateEnvironment", "Forbidden"] {
            #expect(classify(403, reason) == .outcome(.credentialsBroken(reason: APNsReason(reason))))
        }
        #expect(classify(404, "BadPath") == .outcome(.failed(reason: .badPath, status: 404)))
        #expect(classify(405, "MethodNotAllowed") == .outcome(.failed(reason: .methodNotAllowed, status: 405)))
        #expect(classify(413, "PayloadTooLarge") == .outcome(.failed(reason: .payloadTooLarge, status: 413)))
        #expect(classify(429, "TooManyProviderTokenUpdates") == .outcome(.retryLater(reason: .tooManyProviderTokenUpdates, after: .seconds(60))))
        #expect(classify(429, "TooManyRequests") == .outcome(.retryLater(reason: .tooManyRequests, after: .seconds(30))))
        #expect(classify(500, "InternalServerError") == .retryElsewhere(reason: .internalServerError, refreshToken: false, retireConnection: false))
        #expect(classify(503, "ServiceUnavailable") == .retryElsewhere(reason: .serviceUnavailable, refreshToken: false, retireConnection: false))
        #expect(classify(503, "Shutdown") == .retryElsewhere(reason: .shutdown, refreshToken: false, retireConnection: true))
        #expect(classify(400, "Brand new") == .outcome(.failed(reason: .unknown("Brand new"), status: 400)))
    }

    @Test func reasonsRoundTripApplesSpelling() {
        #expect(APNsReason("TooManyProviderTokenUpdates") == .tooManyProviderTokenUpdates)
        #expect(APNsReason.badEnvironmentKeyIdInToken.rawValue == "BadEnvironmentKeyIdInToken")
        #expect(APNsReason("Whatever").rawValue == "Whatever")
    }

    @Test func connectionNeverChangesItsTokenWithinTwentyMinutes() {
        let policy = APNsTokenPolicy()
        let start = Date(timeIntervalSince1970: 1_000_000)
        let old = APNsProviderToken(jwt: "old", issuedAt: start)
        let new = APNsProviderToken(jwt: "new", issuedAt: start.addingTimeInterval(45 * 60))

        #expect(policy.decide(connectionToken: nil, adoptedAt: nil, shared: new, now: start) == .use(new))
        // Adopted the old token 10 minutes ago: keep it.
        let adopted = start.addingTimeInterval(40 * 60)
        #expect(policy.decide(connectionToken: old, adoptedAt: adopted, shared: new, now: adopted.addingTimeInterval(600)) == .use(old))
        // Twenty minutes after adopting it, change.
        #expect(policy.decide(connectionToken: old, adoptedAt: adopted, shared: new, now: adopted.addingTimeInterval(1200)) == .use(new))
        // Can't change yet and the old token is about to expire: replace the connection.
        #expect(policy.decide(connectionToken: old, adoptedAt: adopted, shared: new, now: start.addingTimeInterval(56 * 60)) == .retire)
    }

    @Test func tokenStoreSignsOneTokenUntilTheRefreshAge() throws {
        let clock = ManualClock()
        let signer = try APNsTokenSigner(keyID: "K", teamID: "T", privateKeyPEM: P256Key.pem)
        let store = APNsTokenStore(signer: signer, policy: APNsTokenPolicy(), now: { clock.now })
        let first = try store.current()
        clock.advance(by: 44 * 60)
        #expect(try store.current() == first)
        clock.advance(by: 2 * 60)
        let second = try store.current()
        #expect(second != first)
        #expect(store.signedCount == 2)
        // An expiry report for the young token signs nothing.
        #expect(try store.refresh(afterExpiry: second) == false)
        // One for an already replaced token reports the newer one.
        #expect(try store.refresh(afterExpiry: first) == true)
        #expect(store.signedCount == 2)
    }

    @Test func jwtHasES256HeaderWithKidAndNumericIat() throws {
        let signer = try APNsTokenSigner(keyID: "KEY1", teamID: "TEAM1", privateKeyPEM: P256Key.pem)
        let token = try signer.sign(issuedAt: Date(timeIntervalSince1970: 1_700_000_000))
        let parts = token.jwt.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        func decode(_ part: String) -> String {
            var base64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while base64.count % 4 != 0 { base64 += "=" }
            return String(decoding: Data(base64Encoded: base64) ?? Data(), as: UTF8.self)
        }
        #expect(decode(parts[0]) == #"{"alg":"ES256","kid":"KEY1"}"#)
        #expect(decode(parts[1]) == #"{"iss":"TEAM1","iat":1700000000}"#)
    }

    @Test func tokenConnectionCarriesOneStreamUntilItsFirstSuccess() {
        var machine = APNsPoolStateMachine(streamCap: 1000)
        _ = machine.connectionReady(1, tokenAuth: true)
        _ = machine.settingsReceived(1, maxConcurrentStreams: 500)
        #expect(machine.lease(1) == .leased(1))
        #expect(machine.lease(2) == .wait)
        #expect(machine.lease(3) == .wait)
        // The first success opens the peer's limit: both waiters go.
        #expect(machine.release(1, succeeded: true) == [.resume(2, 1), .resume(3, 1)])
        #expect(machine.inFlight == 2)
    }

    @Test func drainingConnectionTakesNoStreamsAndClosesWhenEmpty() {
        var machine = APNsPoolStateMachine(streamCap: 1000)
        _ = machine.connectionReady(1, tokenAuth: false)
        _ = machine.connectionReady(2, tokenAuth: false)
        _ = machine.settingsReceived(1, maxConcurrentStreams: 10)
        _ = machine.settingsReceived(2, maxConcurrentStreams: 10)
        #expect(machine.lease(1) == .leased(1))
        #expect(machine.drain(1) == [])
        #expect(machine.lease(2) == .leased(2))
        #expect(machine.release(1, succeeded: true) == [.close(1)])
        #expect(machine.lease(3, avoiding: 2) == .leased(2))
    }

    @Test func waitersFailWhenThePoolShutsDown() {
        var machine = APNsPoolStateMachine(streamCap: 1000)
        #expect(machine.lease(1) == .wait)
        #expect(machine.shutdown() == [.failShutdown(1)])
        #expect(machine.lease(2) == .shutdown)
    }
}

enum P256Key {
    static let pem = P256.Signing.PrivateKey().pemRepresentation
}
