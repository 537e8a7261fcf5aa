import Foundation
import HeraldCore
import Logging
import PostgresNIO

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A private PostgreSQL cluster in a directory of its own, started from the system's
/// PostgreSQL server binaries: the database `herald serve` uses when none is configured,
/// and the one the test harness starts.
///
/// Layout under ``Configuration/directory``: `data/` (the cluster), `server.log`,
/// `superuser-password`. As root, the binaries run as the `postgres` user (initdb refuses
/// root); the server listens on 127.0.0.1 only and runs in its own session, so a Ctrl-C
/// in the terminal reaches Herald, which then stops the cluster after draining.
public struct EmbeddedPostgres: Sendable {
    public struct Configuration: Sendable {
        /// Where the cluster lives.
        public var directory: String
        /// Directory of `initdb`/`pg_ctl`; found automatically when nil.
        public var binDirectory: String?
        /// Port to listen on; a free one when nil.
        public var port: Int?
        /// Durable writes. Off only for throwaway clusters (tests).
        public var durable: Bool
        /// The database created for Herald.
        public var database: String

        public init(directory: String, binDirectory: String? = nil, port: Int? = nil, durable: Bool = true, database: String = "herald") {
            self.directory = directory
            self.binDirectory = binDirectory
            self.port = port
            self.durable = durable
            self.database = database
        }
    }

    /// Connection URL of the running cluster's Herald database.
    public let url: DatabaseURL
    let configuration: Configuration
    let binDirectory: String

    static let superuser = "herald"

    /// Initialises the cluster if needed and starts it; returns once it accepts connections.
    public static func start(_ configuration: Configuration, logger: Logger) async throws -> EmbeddedPostgres {
        let binDirectory = try configuration.binDirectory ?? findBinDirectory()
        let base = URL(fileURLWithPath: configuration.directory).standardizedFileURL.path
        let data = base + "/data"
        let passwordFile = base + "/superuser-password"
        let owner = try ClusterOwner.current()

        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        try owner.take(base)
        let password: String
        if let stored = try? String(contentsOfFile: passwordFile, encoding: .utf8), !stored.isEmpty {
            password = stored.trimmingCharacters()
        } else {
            password = RandomToken.hex(byteCount: 16)
            try password.write(toFile: passwordFile, atomically: false, encoding: .utf8)
            chmod(passwordFile, 0o600)
            try owner.take(passwordFile)
        }

        if !FileManager.default.fileExists(atPath: data + "/PG_VERSION") {
            logger.info("initialising embedded PostgreSQL", metadata: ["herald.postgres.data": "\(data)"])
            var initdb = [
                binDirectory + "/initdb", "-D", data, "-U", superuser, "--pwfile=" + passwordFile,
                "--auth-local=scram-sha-256", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C",
            ]
            if !configuration.durable { initdb.append("--no-sync") }
            let result = try await ProcessRunner.run(owner.command(initdb))
            guard result.status == 0 else {
                throw EmbeddedPostgresError("initdb failed in \(data):\n\(result.text)")
            }
        }

        let pgctl = binDirectory + "/pg_ctl"
        if try await ProcessRunner.run(owner.command([pgctl, "status", "-D", data])).status == 0 {
            logger.notice("embedded PostgreSQL was left running; restarting it", metadata: ["herald.postgres.data": "\(data)"])
            _ = try await ProcessRunner.run(owner.command([pgctl, "stop", "-D", data, "-m", "fast", "-w"]))
        }

        let port = try configuration.port ?? FreePort.find()
        var options = "-c listen_addresses=127.0.0.1 -c port=\(port) -c unix_socket_directories='' -c max_connections=200"
        if !configuration.durable {
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        }
        let start = owner.command([pgctl, "start", "-D", data, "-l", base + "/server.log", "-w", "-t", "60", "-o", options])
        let started = try await ProcessRunner.run(start, newSession: true)
        guard started.status == 0 else {
            let log =
                (try? String(contentsOfFile: base + "/server.log", encoding: .utf8))?.split(separator: "\n").suffix(15).joined(separator: "\n") ?? ""
            throw EmbeddedPostgresError("pg_ctl start failed:\n\(started.text)\n\(log)")
        }

        let server = DatabaseURL(host: "127.0.0.1", port: port, username: superuser, password: password, database: "postgres", tlsMode: .disable)
        try await DatabaseProbe.withConnection(to: server, logger: logger) { connection in
            try await createDatabaseIfMissing(configuration.database, on: connection, logger: logger)
        }
        logger.info("embedded PostgreSQL is running", metadata: ["herald.postgres.port": "\(port)", "herald.postgres.data": "\(data)"])
        return EmbeddedPostgres(url: server.with(database: configuration.database), configuration: configuration, binDirectory: binDirectory)
    }

    /// Stops the cluster, waiting for it to shut down cleanly.
    public func stop(logger: Logger) async {
        let data = URL(fileURLWithPath: configuration.directory).standardizedFileURL.path + "/data"
        do {
            let owner = try ClusterOwner.current()
            let result = try await ProcessRunner.run(owner.command([binDirectory + "/pg_ctl", "stop", "-D", data, "-m", "fast", "-w"]))
            if result.status != 0 {
                logger.error("pg_ctl stop failed", metadata: ["herald.postgres.output": "\(result.text)"])
            } else {
                logger.info("embedded PostgreSQL stopped")
            }
        } catch {
            logger.error("cannot stop embedded PostgreSQL", metadata: ["error": "\(error)"])
        }
    }

    /// Starts the cluster again after ``stop(logger:)``, on the same port: the end of an
    /// outage, for tests.
    public func restart(logger: Logger) async throws {
        var configuration = configuration
        configuration.port = url.port
        _ = try await Self.start(configuration, logger: logger)
    }

    /// Stops the cluster immediately from the calling thread: for `atexit` handlers, where
    /// nothing asynchronous can run any more.
    public func stopImmediately() {
        let data = URL(fileURLWithPath: configuration.directory).standardizedFileURL.path + "/data"
        guard let owner = try? ClusterOwner.current() else { return }
        _ = try? ProcessRunner.runBlocking(owner.command([binDirectory + "/pg_ctl", "stop", "-D", data, "-m", "immediate", "-w"]), newSession: false)
    }

    /// Creates `name` on the server unless it exists.
    private static func createDatabaseIfMissing(_ name: String, on connection: PostgresConnection, logger: Logger) async throws {
        let rows = try await connection.query("SELECT 1 FROM pg_database WHERE datname = \(name)", logger: logger)
        for try await _ in rows { return }
        try await connection.query(
            PostgresQuery(unsafeSQL: "CREATE DATABASE \"\(name.replacingOccurrences(of: "\"", with: "\"\""))\""),
            logger: logger
        )
    }

    /// The newest `/usr/lib/postgresql/N/bin`, `pg_config --bindir`, or `initdb` on PATH.
    static func findBinDirectory() throws -> String {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap(Int.init)
            .sorted(by: >)
        for version in versions where FileManager.default.isExecutableFile(atPath: "\(root)/\(version)/bin/initdb") {
            return "\(root)/\(version)/bin"
        }
        if let initdb = ProcessRunner.which("initdb") {
            return URL(fileURLWithPath: initdb).deletingLastPathComponent().path
        }
        throw EmbeddedPostgresError(
            "PostgreSQL server binaries (initdb, pg_ctl) not found: install them (Debian: apt-get install -y postgresql-15), "
                + "set HERALD_POSTGRES_BIN_DIR, or point HERALD_DATABASE_URL at a running PostgreSQL"
        )
    }
}

/// Who runs the cluster's binaries: the current user, or `postgres` when running as root.
struct ClusterOwner {
    var runAs: (name: String, uid: uid_t, gid: gid_t)?

    static func current() throws -> ClusterOwner {
        guard geteuid() == 0 else { return ClusterOwner(runAs: nil) }
        guard let entry = getpwnam("postgres") else {
            throw EmbeddedPostgresError("running as root, but there is no 'postgres' user to run PostgreSQL as (install postgresql-15)")
        }
        return ClusterOwner(runAs: ("postgres", entry.pointee.pw_uid, entry.pointee.pw_gid))
    }

    func command(_ arguments: [String]) -> [String] {
        guard let runAs else { return arguments }
        let runuser = ProcessRunner.which("runuser") ?? "/usr/sbin/runuser"
        return [runuser, "-u", runAs.name, "--"] + arguments
    }

    func take(_ path: String) throws {
        guard let runAs else { return }
        guard chown(path, runAs.uid, runAs.gid) == 0 else {
            throw EmbeddedPostgresError("cannot give \(path) to the postgres user (errno \(errno))")
        }
        chmod(path, FileManager.default.fileExists(atPath: path + "/.") ? 0o700 : 0o600)
    }
}

/// Finds a free TCP port on the loopback interface.
enum FreePort {
    static func find() throws -> Int {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw EmbeddedPostgresError("cannot open a socket to find a free port") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw EmbeddedPostgresError("cannot find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
