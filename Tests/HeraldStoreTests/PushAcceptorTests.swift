import Foundation
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
            let app = try await store.createApp(name: "Group")
            let acceptor = PushAcceptor(store: store, maxBatch: 16, maxConcurrentCommits: 1)
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
            let rows = try await store.client.query(
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
            let app = try await store.createApp(name: "Group")
            let acceptor = PushAcceptor(store: store, maxBatch: 64, maxConcurrentCommits: 1)
            let request = try Self.request(#"{"audience":"all","notification":{"alert":"hi"}}"#)
            let push = try request.validated()
            // Every fifth push names an app that doesn't exist: its insert violates the
            // foreign key, which fails whichever batch it lands in.
            let results = await withTaskGroup(of: (Bool, Result<AcceptedPush, any Error>).self) { group in
                for index in 0..<100 {
                    let valid = index % 5 != 0
                    group.addTask {
                        do {
                            return (valid, .success(try await acceptor.accept(request, push: push, appID: valid ? app.app.id : -1)))
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
            let rows = try await store.client.query("SELECT count(*) FROM messages", logger: TestDatabase.logger)
            for try await count in rows.decode(Int64.self) { #expect(count == 80) }
        }
    }

    @Test func anExplicitAudienceIsCheckedInTheStatementThatStoresIt() async throws {
        try await withStore { store in
            let app = try await store.createApp(name: "Group")
            let device = try await store.registerDevice(appKey: app.app.appKey, DeviceRegistration(platform: .linux))
            let acceptor = PushAcceptor(store: store, maxBatch: 64, maxConcurrentCommits: 1)
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
            let rows = try await store.client.query("SELECT count(*) FROM messages", logger: TestDatabase.logger)
            for try await count in rows.decode(Int64.self) { #expect(count == 40) }
        }
    }

    @Test func pushesWithACidStillDeduplicate() async throws {
        try await withStore { store in
            let app = try await store.createApp(name: "Group")
            let acceptor = PushAcceptor(store: store)
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

    private func withStore(_ body: @Sendable @escaping (HeraldStore) async throws -> Void) async throws {
        try await TestDatabase.withStore(body)
    }
}
