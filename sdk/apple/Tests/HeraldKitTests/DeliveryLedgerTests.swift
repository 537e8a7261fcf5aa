import Foundation
import Testing

@testable import HeraldKit

/// One record of what arrived: a message's copy over the connection and its APNs copy are
/// shown once, whichever comes first, in the app or in its extension (another process).
struct DeliveryLedgerTests {
    @Test func theSecondCopyOfAMessageIsNotShownWhicheverChannelBroughtTheFirst() throws {
        let ledger = InMemoryLedgerStore()
        #expect(try ledger.arrived("1", via: .connection))
        #expect(try !ledger.arrived("1", via: .apns))
        #expect(try ledger.arrived("2", via: .apns))
        #expect(try !ledger.arrived("2", via: .connection))
        #expect(try !ledger.arrived("2", via: .apns))
        #expect(ledger.update { $0.channel(of: "1") } == .connection)
        #expect(ledger.update { $0.channel(of: "2") } == .apns)
    }

    @Test func theLedgerRemembersTheMostRecentIDsOnly() throws {
        let ledger = InMemoryLedgerStore(capacity: 3)
        for id in ["a", "b", "c", "d"] { #expect(try ledger.arrived(id, via: .connection)) }
        #expect(ledger.update { $0.entries.map(\.msgID) } == ["b", "c", "d"])
        #expect(try ledger.arrived("a", via: .apns), "the oldest id was forgotten")
        #expect(try !ledger.arrived("d", via: .apns))
    }

    @Test func aFileLedgerIsSharedByTwoStoresAsByTheAppAndItsExtension() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("ledger.json")
        let app = FileLedgerStore(url: url)
        let serviceExtension = FileLedgerStore(url: url)
        #expect(try serviceExtension.arrived("42", via: .apns))
        #expect(try !app.arrived("42", via: .connection))
        #expect(try app.arrived("43", via: .connection))
        // A later launch reads what was kept.
        #expect(try !FileLedgerStore(url: url).arrived("43", via: .apns))
    }

    @Test func concurrentArrivalsOfOneMessageShowItOnce() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("ledger.json")
        let shown = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<8 {
                group.addTask { try FileLedgerStore(url: url).arrived("7", via: index.isMultiple(of: 2) ? .apns : .connection) }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(shown == 1)
    }
}
