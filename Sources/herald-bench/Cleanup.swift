import Dispatch
import Foundation
import NIOConcurrencyHelpers

/// What must be undone however a benchmark ends (normally, by an error, or by SIGINT or
/// SIGTERM): load-generator processes, the embedded PostgreSQL (it runs in a session of
/// its own, so a Ctrl-C doesn't reach it), temporary directories.
///
/// Actions run once, newest first.
final class Cleanup: @unchecked Sendable {
    // The signal sources are set once here and only kept alive; the actions are locked.
    private let actions = NIOLockedValueBox<[(name: String, action: @Sendable () -> Void)]>([])
    private let signalSources: [any DispatchSourceSignal]

    init() {
        var sources: [any DispatchSourceSignal] = []
        let actions = self.actions
        for (signalNumber, exitCode) in [(SIGINT, Int32(130)), (SIGTERM, Int32(143))] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                FileHandle.standardError.write(Data("herald-bench: interrupted; cleaning up\n".utf8))
                Self.run(actions)
                exit(exitCode)
            }
            source.resume()
            sources.append(source)
        }
        signalSources = sources
    }

    /// Registers `action` to run at the end.
    func add(_ name: String, _ action: @escaping @Sendable () -> Void) {
        actions.withLockedValue { $0.append((name, action)) }
    }

    /// Runs every registered action that hasn't run yet.
    func run() {
        Self.run(actions)
    }

    private static func run(_ actions: NIOLockedValueBox<[(name: String, action: @Sendable () -> Void)]>) {
        while let next = actions.withLockedValue({ $0.popLast() }) {
            next.action()
        }
    }
}
