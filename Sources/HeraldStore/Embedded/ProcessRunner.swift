import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a helper program (initdb, pg_ctl) to completion on a thread of its own, without
/// blocking Swift's cooperative threads.
///
/// Uses posix_spawn and waitpid directly: output goes to a file rather than a pipe (a
/// server the program starts in the background would inherit a pipe and hold it open),
/// and `newSession` starts the program in a session of its own, so a Ctrl-C meant for
/// Herald doesn't reach the server it starts.
enum ProcessRunner {
    struct Output {
        var status: Int32
        var text: String
    }

    static func run(_ arguments: [String], newSession: Bool = false) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try runBlocking(arguments, newSession: newSession) })
            }
        }
    }

    static func runBlocking(_ arguments: [String], newSession: Bool) throws -> Output {
        let outputPath = NSTemporaryDirectory() + "herald-\(UUID().uuidString).out"
        let fd = open(outputPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw EmbeddedPostgresError("cannot create \(outputPath) (errno \(errno))") }
        defer {
            close(fd)
            unlink(outputPath)
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fd, 1)
        posix_spawn_file_actions_adddup2(&actions, fd, 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        #if os(Linux)
        // POSIX_SPAWN_SETSID (glibc >= 2.26), not exported to Swift without _GNU_SOURCE.
        if newSession { posix_spawnattr_setflags(&attributes, 0x80) }
        #endif

        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, environ)
        guard spawned == 0 else { throw EmbeddedPostgresError("cannot run \(arguments[0]) (error \(spawned))") }

        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw EmbeddedPostgresError("waiting for \(arguments[0]) failed (errno \(errno))") }
        }
        let exitStatus: Int32 = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return Output(status: exitStatus, text: text)
    }

    /// The absolute path of `program` on PATH.
    static func which(_ program: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(program)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
