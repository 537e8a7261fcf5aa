import HeraldStore
import HeraldTestSupport
import NIOConcurrencyHelpers
import PostgresNIO
import Testing

/// The node's one LISTEN connection: each subscriber hears its channel only, is told when
/// the channels are listened to again after the connection was killed or its link cut, and
/// its stream ends when the listener stops. Against a real PostgreSQL, through a proxy the
/// test can pause (a cut link: no error, no answer).
@Suite struct DatabaseListenerTests {
    @Test func eachSubscriberHearsItsChannelOnlyAfterBeingToldItIsListening() async throws {
        try await TestDatabase.withDatabase { url in
            try await TestDatabase.withClient(url) { sql in
                let listener = DatabaseListener(url: url, logger: TestDatabase.logger)
                let jobs = Heard(listener.subscribe("t_jobs"))
                let alsoJobs = Heard(listener.subscribe("t_jobs"))
                let schedules = Heard(listener.subscribe("t_schedules"))
                try await running(listener) {
                    try await jobs.wait(for: [.listening(again: false)])
                    try await schedules.wait(for: [.listening(again: false)])
                    try await sql.query("SELECT pg_notify('t_jobs', 'one'), pg_notify('t_jobs', 'two')")
                    try await sql.query("NOTIFY t_schedules, 'changed'")
                    try await jobs.wait(for: [.listening(again: false), .notification("one"), .notification("two")])
                    try await alsoJobs.wait(for: [.listening(again: false), .notification("one"), .notification("two")])
                    try await schedules.wait(for: [.listening(again: false), .notification("changed")])
                    // The three subscriptions share one connection.
                    #expect(try await listeningConnections(sql) == 1)
                }
                // Stopped: every stream ends.
                try await jobs.waitForEnd()
                try await schedules.waitForEnd()
            }
        }
    }

    @Test func aKilledConnectionIsReplacedAndTheSubscribersAreToldToLookForWhatTheyMissed() async throws {
        try await TestDatabase.withDatabase { url in
            try await TestDatabase.withClient(url) { sql in
                let listener = DatabaseListener(url: url, logger: TestDatabase.logger)
                let jobs = Heard(listener.subscribe("t_jobs"))
                try await running(listener) {
                    try await jobs.wait(for: [.listening(again: false)])
                    let killed = try await sql.query(
                        """
                        SELECT count(pg_terminate_backend(pid))::int FROM pg_stat_activity
                        WHERE datname = current_database() AND query LIKE 'LISTEN%'
                        """
                    )
                    for try await count in killed.decode(Int.self) { #expect(count == 1) }
                    try await jobs.wait(for: [.listening(again: false), .listening(again: true)], within: .seconds(30))
                    try await sql.query("NOTIFY t_jobs, 'after'")
                    try await jobs.wait(for: [.listening(again: false), .listening(again: true), .notification("after")])
                }
            }
        }
    }

    /// A cut link raises no error: the listener finds it by a check that gets no answer,
    /// and listens again once the link is back.
    @Test func aCutLinkIsFoundByItsUnansweredCheckAndListenedThroughAgainWhenBack() async throws {
        try await TestDatabase.withDatabase { url in
            let link = try await PausableTCPProxy.start(to: url.host, port: url.port)
            defer { Task { await link.stop() } }
            try await TestDatabase.withClient(url) { sql in
                let listener = DatabaseListener(
                    url: url.through(link),
                    connectTimeout: .seconds(1),
                    checkInterval: .milliseconds(500),
                    logger: TestDatabase.logger
                )
                let jobs = Heard(listener.subscribe("t_jobs"))
                try await running(listener) {
                    try await jobs.wait(for: [.listening(again: false)])
                    link.pause()
                    // Sent while the link is cut: the old connection would deliver it once
                    // the link is back, but the listener gave that connection up.
                    try await sql.query("NOTIFY t_jobs, 'during'")
                    // At least one check (0.5 s) and its timeout (1 s) pass.
                    try await Task.sleep(for: .seconds(3))
                    link.resume()
                    try await jobs.wait(for: [.listening(again: false), .listening(again: true)], within: .seconds(30))
                    try await sql.query("NOTIFY t_jobs, 'after'")
                    try await jobs.wait(for: [.listening(again: false), .listening(again: true), .notification("after")])
                }
            }
        }
    }

    /// Runs the listener while `body` runs, then stops it as a shutdown does (cancelled).
    private func running(_ listener: DatabaseListener, _ body: () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await listener.run() }
            do {
                try await body()
            } catch {
                group.cancelAll()
                throw error
            }
            group.cancelAll()
        }
    }

    private func listeningConnections(_ sql: PostgresClient) async throws -> Int {
        let rows = try await sql.query(
            "SELECT count(*)::int FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'"
        )
        var count = 0
        for try await n in rows.decode(Int.self) { count = n }
        return count
    }
}

/// What a subscriber heard, read as it comes.
private final class Heard: Sendable {
    private let state = NIOLockedValueBox((events: [DatabaseListener.Event](), ended: false))
    private let reader: Task<Void, Never>

    init(_ stream: AsyncStream<DatabaseListener.Event>) {
        let state = self.state
        reader = Task {
            for await event in stream { state.withLockedValue { $0.events.append(event) } }
            state.withLockedValue { $0.ended = true }
        }
    }

    /// Waits until exactly `expected` was heard, in order.
    func wait(for expected: [DatabaseListener.Event], within timeout: Duration = .seconds(10)) async throws {
        let deadline = ContinuousClock.now + timeout
        while state.withLockedValue({ $0.events.count < expected.count }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        // Anything more that would come with them.
        try await Task.sleep(for: .milliseconds(100))
        let heard = state.withLockedValue { $0.events }
        #expect(heard == expected)
        if heard != expected { throw WaitTimedOut(description: "heard \(heard), expected \(expected)") }
    }

    func waitForEnd(within timeout: Duration = .seconds(10)) async throws {
        let deadline = ContinuousClock.now + timeout
        while !state.withLockedValue({ $0.ended }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(state.withLockedValue { $0.ended }, "the stream did not end when the listener stopped")
    }
}
