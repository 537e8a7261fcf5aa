import NIOConcurrencyHelpers
import Testing

@testable import HeraldStore

/// ``GroupCommit`` on its own, with a commit that records its batches.
@Suite struct GroupCommitTests {
    @Test func itemsQueuedDuringACommitGoTogetherInTheNextOneAndEachGetsItsOwnOutcome() async throws {
        let batches = NIOLockedValueBox<[[Int]]>([])
        let (gate, open) = AsyncStream<Void>.makeStream()
        let commits = GroupCommit<Int, Int>(maxBatch: 64, maxConcurrentCommits: 1) { items in
            let first = batches.withLockedValue { batches in
                batches.append(items)
                return batches.count == 1
            }
            if first {
                for await _ in gate { break }
            }
            return items.map { $0 * 10 }
        }
        let first = Task { await commits.submit(0) }
        try await eventually { batches.withLockedValue { $0.count } == 1 }

        let others = (1...10).map { item in Task { await commits.submit(item) } }
        try await eventually { commits.queued == 10 }
        open.yield()

        #expect(await first.value == 0)
        for (index, task) in others.enumerated() { #expect(await task.value == (index + 1) * 10) }
        let recorded = batches.withLockedValue { $0 }
        #expect(recorded.count == 2)
        #expect(recorded.first == [0])
        #expect(recorded.last?.sorted() == Array(1...10))
    }

    @Test func aCommitCarriesAtMostMaxBatchItemsAndAtMostMaxConcurrentCommitsRun() async throws {
        let batches = NIOLockedValueBox<[[Int]]>([])
        let running = NIOLockedValueBox((now: 0, most: 0))
        let commits = GroupCommit<Int, Int>(maxBatch: 4, maxConcurrentCommits: 2) { items in
            running.withLockedValue { running in
                running.now += 1
                running.most = max(running.most, running.now)
            }
            batches.withLockedValue { $0.append(items) }
            try? await Task.sleep(for: .milliseconds(5))
            running.withLockedValue { $0.now -= 1 }
            return items.map { -$0 }
        }
        let outcomes = await withTaskGroup(of: (Int, Int).self) { group in
            for item in 0..<50 { group.addTask { (item, await commits.submit(item)) } }
            return await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        #expect(outcomes == Dictionary(uniqueKeysWithValues: (0..<50).map { ($0, -$0) }))
        let recorded = batches.withLockedValue { $0 }
        #expect(recorded.allSatisfy { (1...4).contains($0.count) })
        #expect(recorded.flatMap { $0 }.sorted() == Array(0..<50))
        #expect(running.withLockedValue { $0.most } <= 2)
        #expect(commits.queued == 0)
    }

    /// Waits until `condition` holds, for at most 10 s.
    private func eventually(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("condition never held")
                return
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }
}
