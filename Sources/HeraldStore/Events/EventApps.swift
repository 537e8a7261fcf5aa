import Logging
import NIOConcurrencyHelpers
import PostgresNIO

/// Which apps record delivery events, kept in the process so that the push path pays one
/// lookup in a set for it, not a query: an app records every event when its events are
/// enabled or it has a webhook; an app whose pushes carried a `callback` records the events
/// of those pushes (its acknowledgements are then looked at).
///
/// The sets are read from the database again when older than `lifetime` (by the caller
/// that finds them stale; the others keep using the old sets meanwhile), and at once on
/// this node when the API changes an app's setting (``invalidate()``). Another node sees a
/// change within `lifetime`.
public final class EventApps: Sendable {
    public struct Snapshot: Sendable {
        /// Apps that record every event.
        public var all: Set<Int64> = []
        /// Apps with a push that has a callback.
        public var callbacks: Set<Int64> = []
    }

    private struct State {
        var snapshot: Snapshot?
        var loadedAt: ContinuousClock.Instant = .now
        var loading = false
        var invalidated = false
    }

    private let client: PostgresClient
    private let lifetime: Duration
    private let logger: Logger
    private let state = NIOLockedValueBox(State())

    init(client: PostgresClient, lifetime: Duration = .seconds(2), logger: Logger) {
        self.client = client
        self.lifetime = lifetime
        self.logger = logger
    }

    /// Whether the app records every event.
    public func recordsAll(_ appID: Int64) async -> Bool {
        await snapshot().all.contains(appID)
    }

    /// Whether the app records events of any of its pushes.
    public func recordsAny(_ appID: Int64) async -> Bool {
        let snapshot = await snapshot()
        return snapshot.all.contains(appID) || snapshot.callbacks.contains(appID)
    }

    /// Notes that the app sent a push with a callback (before the sets are read again).
    public func noteCallback(appID: Int64) {
        state.withLockedValue { state in
            guard state.snapshot?.callbacks.contains(appID) == false else { return }
            state.snapshot?.callbacks.insert(appID)
        }
    }

    /// Reads the sets again on the next lookup (meanwhile ``current`` stays the old sets).
    public func invalidate() {
        state.withLockedValue { $0.invalidated = true }
    }

    /// The sets as last read, without reading them: for callers that can't wait, kept
    /// fresh by the center's tick (``snapshot()``).
    public var current: Snapshot {
        state.withLockedValue { $0.snapshot ?? Snapshot() }
    }

    /// The sets, read again if stale. A failed read keeps the old sets (or none) and is
    /// tried again on the next lookup.
    public func snapshot() async -> Snapshot {
        let now = ContinuousClock.now
        let (current, mustLoad) = state.withLockedValue { state -> (Snapshot?, Bool) in
            let stale = state.snapshot == nil || state.invalidated || now - state.loadedAt > lifetime
            guard stale else { return (state.snapshot, false) }
            // Without any sets every caller loads; with stale ones one does, the rest use them.
            if state.snapshot != nil, state.loading { return (state.snapshot, false) }
            state.loading = true
            state.invalidated = false
            return (state.snapshot, true)
        }
        guard mustLoad else { return current ?? Snapshot() }
        do {
            let loaded = try await load()
            state.withLockedValue { state in
                state.snapshot = loaded
                state.loadedAt = now
                state.loading = false
            }
            return loaded
        } catch {
            state.withLockedValue { $0.loading = false }
            logger.warning("cannot read which apps record events", metadata: ["error": "\(error)"])
            return current ?? Snapshot()
        }
    }

    private func load() async throws -> Snapshot {
        let rows = try await client.query(
            """
            SELECT a.id, a.events_enabled OR EXISTS (SELECT 1 FROM webhooks w WHERE w.app_id = a.id),
                   EXISTS (SELECT 1 FROM message_callbacks c WHERE c.app_id = a.id LIMIT 1)
            FROM apps a
            WHERE a.events_enabled OR EXISTS (SELECT 1 FROM webhooks w WHERE w.app_id = a.id)
               OR EXISTS (SELECT 1 FROM message_callbacks c WHERE c.app_id = a.id)
            """,
            logger: logger
        )
        var snapshot = Snapshot()
        for try await (id, all, callbacks) in rows.decode((Int64, Bool, Bool).self) {
            if all { snapshot.all.insert(id) }
            if callbacks { snapshot.callbacks.insert(id) }
        }
        return snapshot
    }
}
