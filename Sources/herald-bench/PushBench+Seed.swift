import Foundation
import HeraldCore
import HeraldStore

/// The app and devices a push benchmark sends to.
struct SeededApp: Sendable {
    var appID: Int64
    var appKey: String
    var masterSecret: String
    var registrationIDs: [String]
    var deviceSecrets: [String]
    /// Each device's alias (`bench-<index>`), when seeded.
    var aliases: [String]?
    /// The tag every device has.
    var tag: String

    /// Lines for the load generators: `registration_id device_secret`.
    var clientLines: [String] { zip(registrationIDs, deviceSecrets).map { "\($0) \($1)" } }
}

extension SeededApp {
    /// Creates an app and registers `count` iOS devices through the store, as the device
    /// API would (each with its own secret and APNs token), tags them all with `tag`, and
    /// gives each an alias when `aliases` is set.
    static func seed(_ store: APIStore, count: Int, tag: String = "bench", aliases: Bool) async throws -> SeededApp {
        let created = try await store.createApp(name: "push-bench")
        let appKey = created.app.appKey
        var registered = [RegisteredDevice?](repeating: nil, count: count)
        try await concurrently(count, limit: 32) { index in
            try await store.devices.register(
                appKey: appKey,
                DeviceRegistration(platform: .ios, apnsToken: String(format: "%064x", index + 1), apnsEnvironment: .sandbox)
            )
        } collect: { index, device in
            registered[index] = device
        }
        let devices = registered.compactMap { $0 }
        guard devices.count == count else { throw BenchError("registered \(devices.count) of \(count) devices") }
        let ids = devices.map(\.registrationID)
        for start in stride(from: 0, to: count, by: 1000) {
            _ = try await store.devices.changeTagMembers(
                appID: created.app.id,
                tag: tag,
                add: Array(ids[start..<min(count, start + 1000)]),
                remove: []
            )
        }
        var names: [String]?
        if aliases {
            let all = (0..<count).map { "bench-\($0)" }
            try await concurrently(count, limit: 32) { index in
                var change = DeviceChange()
                change.alias = .set(all[index])
                _ = try await store.devices.update(appID: created.app.id, registrationID: ids[index], change)
            } collect: { _, _ in
            }
            names = all
        }
        return SeededApp(
            appID: created.app.id,
            appKey: appKey,
            masterSecret: created.masterSecret,
            registrationIDs: ids,
            deviceSecrets: devices.map(\.deviceSecret),
            aliases: names,
            tag: tag
        )
    }
}

/// Calls `body` for every index in `0..<count`, at most `limit` at a time, handing each
/// result to `collect` (called serially).
func concurrently<Value: Sendable>(
    _ count: Int,
    limit: Int,
    _ body: @Sendable @escaping (Int) async throws -> Value,
    collect: (Int, Value) -> Void
) async throws {
    try await withThrowingTaskGroup(of: (Int, Value).self) { group in
        var next = 0
        while next < min(limit, count) {
            let index = next
            group.addTask { (index, try await body(index)) }
            next += 1
        }
        while let (index, value) = try await group.next() {
            collect(index, value)
            if next < count {
                let index = next
                group.addTask { (index, try await body(index)) }
                next += 1
            }
        }
    }
}
