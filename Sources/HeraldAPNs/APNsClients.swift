import Crypto
import Foundation
import HeraldCore
import Logging
import NIOConcurrencyHelpers

/// One APNs client per (app, environment), made from the app's credentials on first use,
/// run for as long as the channel runs, and replaced when the credentials change.
///
/// Provider tokens are kept here, one store per signing key (team id, key id), and handed
/// to every client signing with that key: an app's production and sandbox clients send
/// the same token (two tokens for one key in use at once read to Apple as token churn).
///
/// `run()` owns every client's `run()` and every read of credentials: both are handed to
/// it through streams, so no task outlives the channel.
final class APNsClients: Sendable {
    struct Key: Hashable, Sendable {
        var appID: Int64
        var environment: APNsEnvironment
    }

    /// A provider token signing key.
    private struct SigningKey: Hashable, Sendable {
        var teamID: String
        var keyID: String
    }

    private struct Entry: Sendable {
        var client: APNsClient?
        var updatedAt: Date?
        var checkedAt: ContinuousClock.Instant
        var stop: AsyncStream<Void>.Continuation?
    }

    private let store: any APNsChannelStore
    private let configuration: APNsChannelConfiguration
    private let logger: Logger
    /// A key's client, or the callers waiting for the credentials read that will decide it.
    private enum Slot: Sendable {
        case ready(Entry)
        case resolving([CheckedContinuation<APNsClient?, any Error>])
    }

    /// A read of a key's credentials, for ``run()`` to make.
    private struct Resolution: Sendable {
        var key: Key
        var previous: Entry?
        var now: ContinuousClock.Instant
    }

    private let entries = NIOLockedValueBox<[Key: Slot]>([:])
    /// Provider tokens per signing key, shared by the clients of both environments.
    private let tokenStores = NIOLockedValueBox<[SigningKey: APNsTokenStore]>([:])
    /// Per key, the client whose refused credentials were reported (once per client).
    private let refusals = NIOLockedValueBox<[Key: APNsClient]>([:])
    private let sandboxCredentials = NIOLockedValueBox<[Int64: APNsCredentials]>([:])
    private let launches: AsyncStream<(APNsClient, AsyncStream<Void>)>
    private let launch: AsyncStream<(APNsClient, AsyncStream<Void>)>.Continuation
    private let resolutions: AsyncStream<Resolution>
    private let requestResolution: AsyncStream<Resolution>.Continuation
    /// How long a client is trusted before its app's credentials are checked for changes.
    private let recheck: Duration = .seconds(5)

    init(store: any APNsChannelStore, configuration: APNsChannelConfiguration, logger: Logger) {
        self.store = store
        self.configuration = configuration
        self.logger = logger
        (launches, launch) = AsyncStream.makeStream()
        (resolutions, requestResolution) = AsyncStream.makeStream()
    }

    /// Runs every client, and the reads of credentials callers wait for, until cancelled.
    func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask {
                await withDiscardingTaskGroup { reads in
                    for await resolution in self.resolutions {
                        reads.addTask { await self.resolve(resolution) }
                    }
                }
            }
            for await (client, stop) in launches {
                group.addTask {
                    await withDiscardingTaskGroup { inner in
                        inner.addTask { try? await client.run() }
                        for await _ in stop {}
                        inner.cancelAll()
                    }
                }
            }
            group.cancelAll()
        }
    }

    func shutdown() {
        launch.finish()
        requestResolution.finish()
        let waiting = entries.withLockedValue { slots in
            var waiting: [CheckedContinuation<APNsClient?, any Error>] = []
            for slot in slots.values {
                switch slot {
                case .ready(let entry): entry.stop?.finish()
                case .resolving(let waiters): waiting += waiters
                }
            }
            slots.removeAll()
            return waiting
        }
        for waiter in waiting { waiter.resume(throwing: APNsError.shutdown) }
    }

    /// The client for an app in an environment, or nil when the app has no usable
    /// credentials (none, or APNs refused them).
    ///
    /// Single-flight per key: while the app's credentials are read (first use, or the
    /// periodic check for a change), every caller waits for that one read's answer. Two
    /// callers making a client each used to replace one with the other, failing what the
    /// first had in flight, which the center then sent again. The read runs in ``run()``,
    /// not in a caller, so a caller that is cancelled doesn't fail the others' answer.
    func client(appID: Int64, environment: APNsEnvironment) async throws -> APNsClient? {
        let key = Key(appID: appID, environment: environment)
        let now = ContinuousClock.now
        let ready = entries.withLockedValue { slots -> APNsClient?? in
            if case .ready(let entry) = slots[key], now - entry.checkedAt < recheck { return .some(entry.client) }
            return nil
        }
        if let ready { return ready }
        return try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<APNsClient?, any Error>) in
            let answer = entries.withLockedValue { slots -> Result<APNsClient?, any Error>? in
                switch slots[key] {
                case .ready(let entry) where now - entry.checkedAt < recheck:
                    return .success(entry.client)
                case .resolving(let waiters):
                    slots[key] = .resolving(waiters + [waiter])
                    return nil
                case .ready(let entry):
                    return startReading(Resolution(key: key, previous: entry, now: now), for: waiter, in: &slots)
                case nil:
                    return startReading(Resolution(key: key, previous: nil, now: now), for: waiter, in: &slots)
                }
            }
            if let answer { waiter.resume(with: answer) }
        }
    }

    /// Asks ``run()`` to read a key's credentials for `waiter` (and whoever comes meanwhile);
    /// nil then, as the read answers. Shut down: nothing will read, so the answer is that.
    private func startReading(
        _ resolution: Resolution,
        for waiter: CheckedContinuation<APNsClient?, any Error>,
        in slots: inout [Key: Slot]
    ) -> Result<APNsClient?, any Error>? {
        guard case .enqueued = requestResolution.yield(resolution) else { return .failure(APNsError.shutdown) }
        slots[resolution.key] = .resolving([waiter])
        return nil
    }

    /// Reads the app's credentials and keeps, makes or drops its client, then answers every
    /// caller waiting for it (on an error, the slot goes back to what it held before).
    private func resolve(_ resolution: Resolution) async {
        let key = resolution.key
        let previous = resolution.previous
        let result: Result<Entry, any Error>
        do {
            result = .success(try await freshEntry(key, previous: previous, now: resolution.now))
        } catch {
            result = .failure(error)
        }
        let waiters = entries.withLockedValue { slots -> [CheckedContinuation<APNsClient?, any Error>] in
            guard case .resolving(let waiters) = slots[key] else { return [] }  // shut down meanwhile
            switch result {
            case .success(let entry): slots[key] = .ready(entry)
            case .failure: slots[key] = previous.map(Slot.ready)
            }
            return waiters
        }
        if case .success(let entry) = result, let previous, previous.client !== entry.client { previous.stop?.finish() }
        for waiter in waiters { waiter.resume(with: result.map(\.client)) }
    }

    /// The entry the app's stored credentials call for: the previous one when they did not
    /// change, none when there are none or APNs refused them, else a new client.
    private func freshEntry(_ key: Key, previous: Entry?, now: ContinuousClock.Instant) async throws -> Entry {
        let stored = try await store.apnsCredentials(appID: key.appID)
        if var previous, previous.updatedAt == stored?.updatedAt {
            previous.checkedAt = now
            if stored?.brokenReason != nil {
                previous.client = nil  // stopped by the caller
                previous.stop = nil
            }
            return previous
        }
        if let stored, stored.brokenReason != nil {
            return Entry(client: nil, updatedAt: stored.updatedAt, checkedAt: now, stop: nil)
        }
        guard let credentials = stored?.credentials ?? sandboxCredentials(appID: key.appID) else {
            return Entry(client: nil, updatedAt: nil, checkedAt: now, stop: nil)
        }
        if case .sandbox(let target) = configuration.routing { try target.admit(credentials) }
        let client = try APNsClient(
            credentials: credentials,
            configuration: clientConfiguration(for: key.environment),
            logger: logger,
            tokens: try tokenStore(for: credentials)
        )
        let (stop, stopper) = AsyncStream<Void>.makeStream()
        guard case .enqueued = launch.yield((client, stop)) else {
            return Entry(client: nil, updatedAt: nil, checkedAt: now, stop: nil)  // shut down meanwhile
        }
        logger.info(
            "APNs client started",
            metadata: [
                "herald.app_id": "\(key.appID)", "apns.environment": "\(key.environment.rawValue)",
                "apns.bundle_id": "\(credentials.bundleID)",
            ]
        )
        return Entry(client: client, updatedAt: stored?.updatedAt, checkedAt: now, stop: stopper)
    }

    /// The token store of the credentials' signing key (nil for certificate auth): the one
    /// the other environment's client uses, or a new one when there is none or the key
    /// itself changed under the same ids.
    private func tokenStore(for credentials: APNsCredentials) throws -> APNsTokenStore? {
        guard case .token(let keyID, let teamID, let privateKeyPEM) = credentials.auth else { return nil }
        let key = SigningKey(teamID: teamID, keyID: keyID)
        return try tokenStores.withLockedValue { stores in
            if let store = stores[key], store.signs(keyID: keyID, teamID: teamID, privateKeyPEM: privateKeyPEM) { return store }
            let store = try APNsTokenStore(keyID: keyID, teamID: teamID, privateKeyPEM: privateKeyPEM)
            stores[key] = store
            return store
        }
    }

    /// APNs refused the credentials `client` sends with: records the app's credentials as
    /// broken and logs it, once per client however many sends saw the refusal.
    func credentialsRefused(by client: APNsClient, appID: Int64, environment: APNsEnvironment, reason: APNsReason) async {
        let key = Key(appID: appID, environment: environment)
        let first = refusals.withLockedValue { refusals in
            guard refusals[key] !== client else { return false }
            refusals[key] = client
            return true
        }
        guard first else { return }
        logger.error(
            "APNs refused the app's credentials; nothing goes to APNs for it until they are replaced",
            metadata: ["herald.app_id": "\(appID)", "apns.environment": "\(environment.rawValue)", "apns.reason": "\(reason.rawValue)"]
        )
        do {
            try await store.markAPNsCredentialsBroken(appID: appID, reason: reason.rawValue)
        } catch {
            logger.warning("Could not record the app's broken APNs credentials", metadata: ["herald.app_id": "\(appID)", "error": "\(error)"])
        }
    }

    private func clientConfiguration(for environment: APNsEnvironment) -> APNsClient.Configuration {
        var client = configuration.routing.clientConfiguration(environment: environment)
        client.connectionCount = configuration.connections
        client.circuitBreaker = configuration.circuitBreaker
        client.requestTimeout = configuration.requestTimeout
        return client
    }

    /// On the sandbox, an app without credentials gets a generated key (registered with the
    /// sandbox) so its pushes show as APNs deliveries.
    /// One key per app, whichever environment asks first (a second key registered under the
    /// same key id would void the first client's tokens).
    private func sandboxCredentials(appID: Int64) -> APNsCredentials? {
        guard case .sandbox = configuration.routing else { return nil }
        return sandboxCredentials.withLockedValue { generated in
            if let existing = generated[appID] { return existing }
            let credentials = APNsCredentials(
                auth: .token(
                    keyID: String(format: "SBX%07lld", appID % 10_000_000),
                    teamID: "HERALDSBX1",
                    privateKeyPEM: P256.Signing.PrivateKey().pemRepresentation
                ),
                bundleID: "dev.herald.app\(appID)",
                environment: .sandbox
            )
            generated[appID] = credentials
            return credentials
        }
    }
}
