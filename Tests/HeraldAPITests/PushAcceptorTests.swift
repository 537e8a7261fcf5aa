import Foundation
import HeraldAPI
import HeraldCore
import HeraldStore
import HeraldTestSupport
import PostgresNIO
import Testing

/// Group commit: pushes accepted together are each durable when accepted, and one bad
/// push never costs the others their acceptance.
@Suite struct PushAcceptorTests {
    @Test func concurrentPushesAreAllCommittedWithTheirJobs() async throws {
        try await withStore { store in
            let app = try await store.api.createApp(name: "Group")
            let acceptor = PushAcceptor(store: store.api, maxBatch: 16, maxConcurrentCommits: 1)
            let accepted = try await withThrowingTaskGroup(of: AcceptedPush.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        let request = try Self.request(#"{"audience":"all","message":{"msg_content":"m\#(index)"}}"#)
                        return try await acceptor.accept(request, push: try request.validated(), appID: app.app.id)
                    }
                }
                return try await group.reduce(into: [AcceptedPush]()) { $0.append($1) }
            }
            #expect(Set(accepted.map(\.msgID)).count == 200)
            let rows = try await store.sql.query(
                """
                SELECT count(*), count(DISTINCT m.request->'message'->>'msg_content'), count(j.id)
                FROM messages m LEFT JOIN push_jobs j ON j.message_id = m.id AND j.kind = 'push'
                WHERE m.msg_id = ANY(\(accepted.map(\.msgID)))
                """,
                logger: TestDatabase.logger
            )
            for try await (messages, contents, jobs) in rows.decode((Int64, Int64, Int64).self) {
                #expect(messages == 200)
                #expect(contents == 200)
                #expect(jobs == 200)
            }
        }
    }

    @Test func aPushThatCannotBeStoredFailsAloneWithoutItsBatch() async throws {
        try await withStore { store in
            let app = try await store.api.createApp(name: "Group")
            // A trigger that refuses one content stands in for whatever can fail a single
            // push's insert: it fails whichever batch the push lands in.
            try await store.sql.query(
                """
                CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF NEW.request->'message'->>'msg_content' = 'poison' THEN RAISE EXCEPTION 'poison'; END IF;
                    RETURN NEW;
                END
                $$
                """,
                logger: TestDatabase.logger
            )
            try await store.sql.query(
                "CREATE TRIGGER refuse_poison BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION refuse_poison()",
                logger: TestDatabase.logger
            )
            let acceptor = PushAcceptor(store: store.api, maxBatch: 64, maxConcurrentCommits: 1)
            let results = await withTaskGroup(of: (Bool, Result<AcceptedPush, any Error>).self) { group in
                for index in 0..<100 {
                    let valid = index % 5 != 0
                    group.addTask {
                        do {
                            let content = valid ? "fine" : "poison"
                            let request = try Self.request(#"{"audience":"all","message":{"msg_content":"\#(content)"}}"#)
                            return (valid, .success(try await acceptor.accept(request, push: try request.validated(), appID: app.app.id)))
                        } catch {
                            return (valid, .failure(error))
                        }
                    }
                }
                return await group.reduce(into: [(Bool, Result<AcceptedPush, any Error>)]()) { $0.append($1) }
            }
            var stored: [String] = []
            for (valid, result) in results {
                switch result {
                case .success(let accepted):
                    #expect(valid)
                    stored.append(accepted.msgID)
                case .failure:
                    #expect(!valid)
                }
            }
            #expect(stored.count == 80)
            let rows = try await store.sql.query("SELECT count(*) FROM messages", logger: TestDatabase.logger)
            for try await count in rows.decode(Int64.self) { #expect(count == 80) }
        }
    }

    @Test func aPushForAnAppDeletedMeanwhileStoresNothing() async throws {
        try await withStore { store in
            let app = try await store.api.createApp(name: "Gone")
            let acceptor = PushAcceptor(store: store.api)
            #expect(try await store.api.deleteApp(appKey: app.app.appKey))
            // Both paths: the group commit, and a push with a cid alone in its transaction.
            for json in [#"{"audience":"all","message":{"msg_content":"x"}}"#, #"{"audience":"all","message":{"msg_content":"x"},"cid":"c"}"#] {
                let request = try Self.request(json)
                await #expect(throws: HeraldError.self) {
                    _ = try await acceptor.accept(request, push: try request.validated(), appID: app.app.id)
                }
            }
            for table in ["messages", "push_jobs"] {
                let rows = try await store.sql.query("SELECT count(*) FROM \(unescaped: table)", logger: TestDatabase.logger)
                for try await count in rows.decode(Int64.self) { #expect(count == 0, "\(table)") }
            }
        }
    }

    @Test func anExplicitAudienceIsCheckedInTheStatementThatStoresIt() async throws {
        try await withStore { store in
            let app = try await store.api.createApp(name: "Group")
            let device = try await store.api.devices.register(appKey: app.app.appKey, DeviceRegistration(platform: .linux))
            let acceptor = PushAcceptor(store: store.api, maxBatch: 64, maxConcurrentCommits: 1)
            let results = await withTaskGroup(of: (Bool, Result<AcceptedPush, any Error>).self) { group in
                for index in 0..<60 {
                    let reaches = index % 3 != 0
                    let id = reaches ? device.registrationID : Identifiers.newRegistrationID()
                    group.addTask {
                        do {
                            let request = try Self.request(#"{"audience":{"registration_id":["\#(id)"]},"message":{"msg_content":"x"}}"#)
                            return (reaches, .success(try await acceptor.accept(request, push: try request.validated(), appID: app.app.id)))
                        } catch {
                            return (reaches, .failure(error))
                        }
                    }
                }
                return await group.reduce(into: [(Bool, Result<AcceptedPush, any Error>)]()) { $0.append($1) }
            }
            for (reaches, result) in results {
                switch result {
                case .success: #expect(reaches)
                case .failure(let error):
                    #expect(!reaches)
                    #expect((error as? HeraldError)?.code == .noAudienceMatch)
                }
            }
            let rows = try await store.sql.query("SELECT count(*) FROM messages", logger: TestDatabase.logger)
            for try await count in rows.decode(Int64.self) { #expect(count == 40) }
        }
    }

    @Test func textWithANullCharacterIsStoredAsSent() async throws {
        // JSON allows "\u0000" in a string; PostgreSQL's jsonb refuses it (and text can't
        // hold it), so the request is stored as json, kept as written.
        try await withStore { store in
            let app = try await store.api.createApp(name: "Group")
            let acceptor = PushAcceptor(store: store.api)
            let batched = try Self.request(#"{"audience":"all","message":{"msg_content":"a\u0000b","extras":{"k\u0000":"v\u0000"}}}"#)
            let alone = try Self.request(#"{"audience":"all","notification":{"alert":"x\u0000y"},"cid":"nul"}"#)
            var stored: [String] = []
            for request in [batched, alone] {
                stored.append(try await acceptor.accept(request, push: try request.validated(), appID: app.app.id).msgID)
            }
            let rows = try await store.sql.query(
                "SELECT request::text FROM messages WHERE msg_id = ANY(\(stored)) ORDER BY id",
                logger: TestDatabase.logger
            )
            var requests: [PushRequest] = []
            for try await text in rows.decode(String.self) {
                requests.append(try JSONDecoder().decode(PushRequest.self, from: Data(text.utf8)))
            }
            #expect(requests.map(\.message?.msgContent) == ["a\u{0}b", nil])
            #expect(requests.first?.message?.extras?["k\u{0}"] == "v\u{0}")
            #expect(requests.last?.notification?.alert == "x\u{0}y")
        }
    }

    @Test func pushesWithACidStillDeduplicate() async throws {
        try await withStore { store in
            let app = try await store.api.createApp(name: "Group")
            let acceptor = PushAcceptor(store: store.api)
            let request = try Self.request(#"{"audience":"all","message":{"msg_content":"once"},"cid":"order-1"}"#)
            let first = try await acceptor.accept(request, push: try request.validated(), appID: app.app.id)
            let again = try await acceptor.accept(request, push: try request.validated(), appID: app.app.id)
            #expect(again.msgID == first.msgID)
            #expect(again.repeated)
        }
    }

    private static func request(_ json: String) throws -> PushRequest {
        try JSONDecoder().decode(PushRequest.self, from: Data(json.utf8))
    }

    private func withStore(_ body: @Sendable @escaping (TestStores) async throws -> Void) async throws {
        try await TestDatabase.withStore(body)
    }
}
