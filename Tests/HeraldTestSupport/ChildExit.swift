import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether a child process has exited, and its status, read with `waitpid` rather than
/// from Foundation.
///
/// On Linux, `Foundation.Process` learns that its child exited when a socket the child
/// inherited is closed; any other process started meanwhile inherits that socket too (a
/// test's PostgreSQL, another test's child), and then the exit goes unnoticed for as long
/// as that process lives (swift-corelibs-foundation#4795). A test run stalled 300 s that
/// way: `heraldctl` had exited and sat a zombie while its test polled `isRunning`. This
/// reaps the child itself; when Foundation reaped it first, Foundation's status is used.
public final class ChildExit: @unchecked Sendable {
    public let process: Process
    private let lock = NSLock()
    private var status: Int32?

    public init(_ process: Process) {
        self.process = process
    }

    /// The exit status (the signal's number when a signal ended it), or nil while the
    /// child runs.
    public var exitStatus: Int32? {
        lock.withLock {
            if let status { return status }
            var raw: Int32 = 0
            let result = waitpid(process.processIdentifier, &raw, WNOHANG)
            if result == process.processIdentifier {
                // WIFEXITED: the low 7 bits are 0; then the status is the next byte.
                status = raw & 0x7f == 0 ? (raw >> 8) & 0xff : raw & 0x7f
            } else if result == -1, errno == ECHILD, !process.isRunning {
                status = process.terminationStatus
            }
            return status
        }
    }

    public var isRunning: Bool { exitStatus == nil }

    /// Waits (blocking this thread, in steps of 10 ms) until the child exits.
    public func waitBlocking() -> Int32 {
        while true {
            if let exitStatus { return exitStatus }
            usleep(10_000)
        }
    }

    /// Waits until the child exits, without blocking a thread.
    public func wait() async -> Int32 {
        while true {
            if let exitStatus { return exitStatus }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
}
