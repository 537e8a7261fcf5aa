import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import PostgresNIO
import Testing

/// The event log's cursor: readers page by (xid, id) below the oldest open transaction, so
/// rows committed out of the order of their ids are never skipped (migration 0018).
@Suite struct EventCursorTests {
    @Test func noEventIsSkippedWhenTransactionsCommitOutOfOrder() async throws {
        try await TestDatabase.withStore { store in
            let app = try await store.api.createApp(name: "Cursor").app
            func insert(_ msgID: String, on connection: PostgresConnection) async throws {
                try await connection.query(
                    "INSERT INTO events (app_id, type, msg_id) VALUES (\(app.id), 'accepted', \(msgID))",
                    logger: TestDatabase.logger
                )
            }
            try await store.sql.withConnection { first in
                try await store.sql.withConnection { second in
                    // T1 inserts first (the smaller id), T2 inserts and commits.
                    try await first.query("BEGIN", logger: TestDatabase.logger)
                    try await insert("t1", on: first)
                    try await second.query("BEGIN", logger: TestDatabase.logger)
                    try await insert("t2", on: second)
                    try await second.query("COMMIT", logger: TestDatabase.logger)
                    // T2's row is committed, but T1 is open and older: nothing is read yet, and
                    // the cursor doesn't move past T1.
                    let early = try await store.events.events(appID: app.id, after: .start, limit: 10)
                    #expect(early.events.isEmpty)
                    // A reader by id alone would have read t2 and moved past t1's id for good.
                    let committed = try await store.sql.query(
                        "SELECT msg_id FROM events WHERE app_id = \(app.id) ORDER BY id",
                        logger: TestDatabase.logger
                    )
                    var visible: [String] = []
                    for try await msgID in committed.decode(String.self) { visible.append(msgID) }
                    #expect(visible == ["t2"])
                    try await first.query("COMMIT", logger: TestDatabase.logger)
                    // Transaction ids are the whole PostgreSQL cluster's: another database's
                    // open transaction also holds the horizon back for a while.
                    // So t1 may come alone first (t2's transaction is younger): read on from each
                    // page's cursor until both came. In a full run other suites' transactions
                    // (a cluster test's nodes mid-transaction while their link is cut) hold it
                    // back for longer: the bound is for "never", not a speed.
                    var read: [String?] = []
                    var cursor = early.cursor
                    let deadline = ContinuousClock.now + .seconds(120)
                    while read.count < 2, ContinuousClock.now < deadline {
                        let page = try await store.events.events(appID: app.id, after: cursor, limit: 10)
                        read += page.events.map(\.msgID)
                        cursor = page.cursor
                        if read.count < 2 { try await Task.sleep(for: .milliseconds(20)) }
                    }
                    #expect(read == ["t1", "t2"])
                    // And nothing comes again after that.
                    let after = try await store.events.events(appID: app.id, after: cursor, limit: 10)
                    #expect(after.events.isEmpty)
                }
            }
        }
    }

    @Test func aCursorReadsBackAsItWasWrittenAndNothingElseDoes() {
        let cursor = EventCursor(xid: 7_000_123, id: 42)
        #expect(EventCursor(cursor.description) == cursor)
        for bad in ["", "7", "7-", "-1-2", "a-b", "1-2-3", "1--2"] {
            #expect(EventCursor(bad) == nil, "\(bad)")
        }
    }
}
