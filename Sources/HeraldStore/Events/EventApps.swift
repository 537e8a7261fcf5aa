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
        /// Grows with every ``invalidate()``.
        var generation = 0
        /// The generation the snapshot was read in (at the start of its read): a read that
        /// began before an invalidation doesn't count as after it.
        var loadedGeneration = -1
    }

    private let client: PostgresClient
    private let lifetime: Duration
    private let logger: Logger
    private let state = NIOLockedValueBox(State())

    /// Reads the sets (the database's, unless a test gives another source).
    private let reader: (@Sendable () async throws -> Snapshot)?

    init(client: PostgresClient, lifetime: Duration = .seconds(2), logger: Logger, reader: (@Sendable () async throws -> Snapshot)? = nil) {
        self.client = client
        self.lifetime = lifetime
        self.logger = logger
        self.reader = reader
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

    /// Reads the sets again on the next lookup: no lookup after this uses sets read
    /// before it (a push right after a webhook is added records its events).
    public func invalidate() {
        state.withLockedValue { $0.generation += 1 }
    }

    /// The sets as last read, without reading them: for callers that can't wait, kept
    /// fresh by the center's tick (``snapshot()``).
    public var current: Snapshot {
        state.withLockedValue { $0.snapshot ?? Snapshot() }
    }

    /// The sets, read again if stale. Merely old sets (older than `lifetime`) are read
    /// again by one caller while the others use them; sets read before an invalidation are
    /// never used: every caller then reads (it is rare, after a setting changed). A failed
    /// read keeps the old sets (or none) and is tried again on the next lookup.
    public func snapshot() async -> Snapshot {
        let now = ContinuousClock.now
        let (current, generation) = state.withLockedValue { state -> (Snapshot?, Int?) in
            let invalidated = state.snapshot == nil || state.loadedGeneration != state.generation
            let old = now - state.loadedAt > lifetime
            if !invalidated, !old || state.loading { return (state.snapshot, nil) }
            state.loading = true
            return (state.snapshot, state.generation)
        }
        guard let generation else { return current ?? Snapshot() }
        do {
            let loaded = try await load()
            state.withLockedValue { state in
                if generation >= state.loadedGeneration {
                    state.snapshot = loaded
                    state.loadedAt = now
                    state.loadedGeneration = generation
                }
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
        if let reader { return try await reader() }
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
