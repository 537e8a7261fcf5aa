import PostgresNIO

extension PostgresClient {
    /// Waits until no other session of the database server runs a statement, and none has
    /// for `quietFor`: what a connect storm set off (each new connection's credentials
    /// check and inbox replay) is over, and a phase measured next measures only itself.
    /// An autovacuum worker counts as a session: the vacuum of the rows a phase wrote is
    /// that phase's work, not the next one's. Polled, as a benchmark may; gives up after
    /// `limit`.
    func waitUntilQuiet(quietFor: Duration = .milliseconds(300), limit: Duration = .seconds(60)) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + limit
        var quietSince: ContinuousClock.Instant?
        while clock.now < deadline {
            let rows = try await query(
                """
                SELECT count(*) FROM pg_stat_activity
                WHERE (backend_type = 'autovacuum worker' OR (backend_type = 'client backend' AND state <> 'idle')) AND pid <> pg_backend_pid()
                """
            )
            var busy: Int64 = 0
            for try await count in rows.decode(Int64.self) { busy = count }
            if busy > 0 {
                quietSince = nil
            } else if let since = quietSince {
                if clock.now - since >= quietFor { return }
            } else {
                quietSince = clock.now
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
