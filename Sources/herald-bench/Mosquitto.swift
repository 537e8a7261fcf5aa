import Foundation

/// The peer broker: Debian's mosquitto, on a free port, with a configuration of our own.
struct Mosquitto {
    let process: ChildProcess
    let port: Int
    let configFile: String

    var pid: Int32 { process.pid }

    static func start(allowDuplicates: Bool) throws -> Mosquitto {
        guard
            let executable = ["/usr/sbin/mosquitto", "/usr/bin/mosquitto", "/usr/local/sbin/mosquitto"].first(
                where: FileManager.default.isExecutableFile
            )
        else {
            throw BenchError("mosquitto is not installed (apt-get install -y mosquitto)")
        }
        let port = 20_000 + Int(getpid() % 10_000)
        let configFile = NSTemporaryDirectory() + "herald-bench-mosquitto-\(getpid()).conf"
        var config = "listener \(port) 0.0.0.0\nallow_anonymous true\npersistence false\nmax_queued_messages 100000\nlog_dest none\n"
        if allowDuplicates { config += "allow_duplicate_messages true\n" }
        if getuid() == 0 { config += "user root\n" }
        try config.write(toFile: configFile, atomically: true, encoding: .utf8)
        return Mosquitto(process: try ChildProcess(executable, ["-c", configFile]), port: port, configFile: configFile)
    }

    func stop() {
        process.terminate()
        try? FileManager.default.removeItem(atPath: configFile)
    }
}
