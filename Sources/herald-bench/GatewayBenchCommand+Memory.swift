import Foundation

extension GatewayBenchCommand {
    /// Resident memory per idle connection: the process's growth from none to `clientIDs.count` connections.
    func measureMemory(
        clientIDs: [String],
        port: Int,
        pid: Int32,
        username: String?,
        subscribe: String?,
        settled: () async throws -> Void = { try await Task.sleep(for: .seconds(3)) }
    ) async throws -> Double {
        try await Task.sleep(for: .seconds(1))
        let before = Stats.residentMemory(pid: pid)
        if pid == getpid() { Stats.printMallocStats("before \(clientIDs.count) connections") }
        let fleet = try await Fleet.start(
            clientIDs: clientIDs,
            processes: loadProcesses,
            port: port,
            username: username,
            password: username == nil ? nil : Self.secret,
            subscribe: subscribe
        )
        try await settled()
        let after = Stats.residentMemory(pid: pid)
        if pid == getpid() { Stats.printMallocStats("with \(clientIDs.count) connections") }
        fleet.stop()
        try await Task.sleep(for: .seconds(2))
        return Double(after - before) / Double(clientIDs.count)
    }
}
