import Configuration
import Foundation
import Synchronization
import Testing

@testable import HeraldServer

/// The README's configuration table against the keys `herald serve` reads: the same keys,
/// environment variables and options that reach them, and the same defaults.
struct ConfigurationTableTests {
    @Test func theTableListsExactlyTheKeysRead() throws {
        let read = try ReadKeys.all()
        let documented = try ConfigurationTable.rows()
        let documentedKeys = Set(documented.map(\.key))
        #expect(documented.count == documentedKeys.count, "a key has two rows")
        let undocumented = Set(read.keys).subtracting(documentedKeys).sorted()
        let unread = documentedKeys.subtracting(read.keys).sorted()
        #expect(undocumented.isEmpty, "read but not in the README's table: \(undocumented)")
        #expect(unread.isEmpty, "in the README's table but never read: \(unread)")
    }

    @Test func eachVariableAndOptionReachesItsKey() async throws {
        for row in try ConfigurationTable.rows() {
            let fromEnvironment = try await ConfigOptions.parse([]).reader(environment: [row.variable: "7"])
            #expect(fromEnvironment.string(forKey: ConfigKey(row.key)) == "7", "\(row.variable) doesn't set \(row.key)")
            if let option = row.option {
                let fromOption = try await ConfigOptions.parse([option, "7"]).reader(environment: [:])
                let value = fromOption.string(forKey: ConfigKey(row.key)) ?? fromOption.int(forKey: ConfigKey(row.key)).map(String.init)
                #expect(value == "7", "\(option) doesn't set \(row.key)")
            }
        }
    }

    /// A number in the table is the code's default; a key in backquotes says the default is
    /// that key's value; another value in backquotes is the default string.
    @Test func theDocumentedDefaultsAreTheCodes() throws {
        let read = try ReadKeys.all()
        let rows = try ConfigurationTable.rows()
        let keys = Set(rows.map(\.key))
        for row in rows {
            guard let readDefault = read[row.key] else { continue }
            let documented = row.defaultValue
            switch readDefault {
            case .int(let value):
                if let number = Int(documented) {
                    #expect(number == value, "\(row.key): the README says \(number), the code \(value)")
                } else {
                    #expect(keys.contains(documented.trimmingCharacters(in: ["`"])), "\(row.key): the default \(value) isn't in the README")
                }
            case .double(let value):
                #expect(Double(documented) == value, "\(row.key): the README says \(documented), the code \(value)")
            case .string(let value):
                if documented.hasPrefix("`"), documented.hasSuffix("`"), documented.count > 2 {
                    #expect(documented.dropFirst().dropLast() == value, "\(row.key): the README says \(documented), the code \(value)")
                } else {
                    #expect(Int(documented) == nil, "\(row.key): the README says \(documented), the code \(value)")
                }
            case nil:
                #expect(Int(documented) == nil && Double(documented) == nil, "\(row.key): the README has a default, the code none")
            default:
                Issue.record("\(row.key): a default of another type (\(readDefault))")
            }
        }
    }

    /// Every number is checked, and a value out of range is reported under its key.
    @Test func anOutOfRangeNumberIsReportedUnderItsKey() throws {
        for (key, value) in try ReadKeys.all() {
            let bad: ConfigContent
            switch value {
            case .int: bad = .int(-1)
            case .double: bad = .double(-1)
            default: continue
            }
            let reader = ConfigReader(provider: InMemoryProvider(values: [AbsoluteConfigKey(ConfigKey(key)): ConfigValue(bad, isSecret: false)]))
            #expect(throws: StartupError.self, "\(key) = -1 is accepted") {
                do {
                    _ = try HeraldConfiguration(reader: reader)
                } catch let error as StartupError {
                    #expect(error.description.hasPrefix("\(key): "), "\(key) = -1: \(error)")
                    throw error
                }
            }
        }
    }
}

/// The keys `HeraldConfiguration` reads from an empty configuration, with their defaults.
enum ReadKeys {
    static func all() throws -> [String: ConfigContent?] {
        let recorder = Recorder()
        _ = try HeraldConfiguration(reader: ConfigReader(provider: InMemoryProvider(values: [:]), accessReporter: recorder))
        return recorder.reads.withLock { $0 }
    }

    private final class Recorder: AccessReporter {
        let reads = Mutex<[String: ConfigContent?]>([:])

        func report(_ event: AccessEvent) {
            let key = event.metadata.key.components.joined(separator: ".")
            let value = (try? event.result.get())?.map(\.content)
            reads.withLock { $0[key] = .some(value) }
        }
    }
}

/// The rows of the README's configuration table.
enum ConfigurationTable {
    struct Row {
        var variable: String
        var key: String
        var option: String?
        var defaultValue: String
    }

    static func rows() throws -> [Row] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false)
        let header = try #require(lines.firstIndex { $0.hasPrefix("| variable | file key | option | default | meaning |") })
        return lines[(header + 2)...].prefix { $0.hasPrefix("|") }.map { line in
            let cells = line.replacingOccurrences(of: "\\|", with: "\u{0}").split(separator: "|", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            func plain(_ cell: String) -> String { cell.trimmingCharacters(in: ["`"]) }
            return Row(
                variable: plain(cells[1]),
                key: plain(cells[2]),
                option: cells[3].isEmpty ? nil : plain(cells[3]),
                defaultValue: cells[4]
            )
        }
    }
}
