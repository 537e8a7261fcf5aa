import Foundation

/// Where CPU time goes during a phase: Herald (this process, with the HTTP load, unless
/// Herald runs as `herald serve` processes), the PostgreSQL cluster, the load generators,
/// and the whole machine (other work on it too).
struct CPUMeter: Sendable {
    /// The postmaster's pid file, for finding the cluster's processes.
    var postmasterPIDFile: String
    var loadPIDs: [Int32]
    /// Herald's processes.
    var heraldPIDs: [Int32] = [getpid()]

    struct Sample: Sendable {
        var at = ContinuousClock.now
        var herald = 0.0
        var postgres = 0.0
        var load = 0.0
        var machineBusy = 0.0
        var machineAll = 0.0
    }

    /// Cores used between two samples.
    struct Usage: Sendable, CustomStringConvertible {
        var herald: Double
        var postgres: Double
        var load: Double
        var machine: Double
        var cores: Int

        var description: String {
            "CPU cores: herald \(Stats.format(herald, 2)), postgres \(Stats.format(postgres, 2)), devices \(Stats.format(load, 2)); "
                + "machine \(Stats.format(machine, 2)) of \(cores) busy"
        }
    }

    func sample() -> Sample {
        var sample = Sample()
        sample.herald = heraldPIDs.map(Self.cpuSeconds).reduce(0, +)
        sample.load = loadPIDs.map(Self.cpuSeconds).reduce(0, +)
        if let text = try? String(contentsOfFile: postmasterPIDFile, encoding: .utf8),
            let line = text.split(separator: "\n").first, let postmaster = Int32(line)
        {
            sample.postgres = Self.processes(parent: postmaster).map(Self.cpuSeconds).reduce(Self.cpuSeconds(postmaster), +)
        }
        // /proc/stat: cpu user nice system idle iowait irq softirq steal ...
        if let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8), let line = stat.split(separator: "\n").first {
            let ticks = line.split(separator: " ").dropFirst().compactMap { Double($0) }
            if ticks.count >= 5 {
                let all = ticks.prefix(8).reduce(0, +)
                sample.machineAll = all
                sample.machineBusy = all - ticks[3] - ticks[4]
            }
        }
        return sample
    }

    func usage(from start: Sample, to end: Sample) -> Usage {
        let seconds = max(Double((end.at - start.at).components.attoseconds) / 1e18 + Double((end.at - start.at).components.seconds), 1e-3)
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let machineAll = max(end.machineAll - start.machineAll, 1)
        return Usage(
            herald: (end.herald - start.herald) / seconds,
            postgres: (end.postgres - start.postgres) / seconds,
            load: (end.load - start.load) / seconds,
            machine: (end.machineBusy - start.machineBusy) / machineAll * Double(cores),
            cores: cores
        )
    }

    /// User and system CPU seconds of a process (0 when it is gone).
    static func cpuSeconds(_ pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        // After "pid (comm) ": state is field 3, utime 14, stime 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The processes whose parent is `parent`.
    static func processes(parent: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else {
                return false
            }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && Int32(fields[1]) == parent
        }
    }
}
