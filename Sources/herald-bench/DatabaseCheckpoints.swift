import PostgresNIO

extension PostgresClient {
    /// Writes every dirty page out and starts the WAL afresh (`CHECKPOINT`). The setups of a
    /// benchmark share one server: without it, the checkpoint PostgreSQL starts by itself
    /// (after about half of `max_wal_size` of WAL) falls where the setups before put it.
    func checkpoint() async throws {
        try await query("CHECKPOINT")
    }

    /// Checkpoints the server has started so far, on its timer, for its WAL or asked for.
    /// PostgreSQL 17 moved these counts from `pg_stat_bgwriter` to `pg_stat_checkpointer`.
    func checkpointsStarted() async throws -> Int64 {
        let rows: PostgresRowSequence
        do {
            rows = try await query("SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter")
        } catch {
            rows = try await query("SELECT num_timed + num_requested FROM pg_stat_checkpointer")
        }
        for try await count in rows.decode(Int64.self) { return count }
        return 0
    }
}
