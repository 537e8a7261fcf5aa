import PostgresNIO

/// Samples what PostgreSQL's backends are doing while `body` runs: the average number of
/// backends in each state, which shows whether Herald's queries wait on a lock, on WAL
/// flushes, on the CPU, or on Herald itself.
struct BackendProfile: Sendable, CustomStringConvertible {
    var samples = 0
    var counts: [String: Int] = [:]

    var description: String {
        guard samples > 0 else { return "no samples" }
        let average = counts.sorted { $0.value > $1.value }.prefix(6).map { "\($0.key) \(Stats.format(Double($0.value) / Double(samples), 1))" }
        return "PostgreSQL backends on average: " + (average.isEmpty ? "none busy" : average.joined(separator: ", "))
    }

    /// Runs `body`, sampling every `interval` until it returns.
    static func sampling<Value: Sendable>(
        _ herald: HeraldInProcess,
        every interval: Duration = .milliseconds(100),
        _ body: @Sendable @escaping () async throws -> Value
    ) async throws -> (Value, BackendProfile) {
        try await sampling(herald.inspection, every: interval, body)
    }

    /// The same, looking at the backends through `database` (a connection of the benchmark's own).
    static func sampling<Value: Sendable>(
        _ database: PostgresClient,
        every interval: Duration = .milliseconds(100),
        _ body: @Sendable @escaping () async throws -> Value
    ) async throws -> (Value, BackendProfile) {
        try await withThrowingTaskGroup(of: Either<Value>.self) { group in
            group.addTask { .value(try await body()) }
            group.addTask {
                var profile = BackendProfile()
                while !Task.isCancelled {
                    if let states = try? await database.backendStates() {
                        profile.samples += 1
                        for state in states { profile.counts[state, default: 0] += 1 }
                    }
                    try? await Task.sleep(for: interval)
                }
                return .profile(profile)
            }
            var value: Value?
            var profile = BackendProfile()
            while let next = try await group.next() {
                switch next {
                case .value(let finished):
                    value = finished
                    group.cancelAll()
                case .profile(let sampled): profile = sampled
                }
            }
            guard let value else { throw BenchError("sampled work returned nothing") }
            return (value, profile)
        }
    }

    private enum Either<Value: Sendable>: Sendable {
        case value(Value)
        case profile(BackendProfile)
    }
}

extension PostgresClient {
    /// What each PostgreSQL backend serving Herald is doing now (idle ones left out):
    /// its wait event (`Lock/object` is the NOTIFY queue lock, `IO/WALSync` a commit's
    /// flush), `running` when on CPU, `Herald, mid-transaction` when idle in a transaction.
    func backendStates() async throws -> [String] {
        let rows = try await query(
            """
            SELECT CASE WHEN state = 'idle in transaction' THEN 'Herald, mid-transaction'
                        WHEN wait_event IS NULL THEN 'running'
                        ELSE wait_event_type || '/' || wait_event END
            FROM pg_stat_activity
            WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND state <> 'idle'
              AND query NOT LIKE 'LISTEN%'
            """
        )
        var states: [String] = []
        for try await state in rows.decode(String.self) { states.append(state) }
        return states
    }
}
