import Foundation
import Synchronization

/// Names the step a long test is in, and prints it to standard error when that step has
/// lasted longer than `limit`: a test that stalls on a continuation nobody resumes shows
/// idle threads only, and this says where it stopped. Prints nothing otherwise.
public final class PhaseWatch: Sendable {
    private let test: String
    private let phase = Mutex<(name: String, since: ContinuousClock.Instant, reported: Bool)>(("starting", .now, false))
    private let watcher = Mutex<Task<Void, Never>?>(nil)

    public init(_ test: String, limit: Duration = .seconds(60)) {
        self.test = test
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                guard let self else { return }
                let stalled = self.phase.withLock { phase -> (String, Duration)? in
                    let lasted = ContinuousClock.now - phase.since
                    guard !phase.reported, lasted > limit else { return nil }
                    phase.reported = true
                    return (phase.name, lasted)
                }
                if let (name, lasted) = stalled {
                    FileHandle.standardError.write(Data("==> \(self.test): still in \"\(name)\" after \(lasted)\n".utf8))
                }
            }
        }
        watcher.withLock { $0 = task }
    }

    /// Starts the step `name`.
    public func enter(_ name: String) {
        phase.withLock { $0 = (name, .now, false) }
    }

    deinit {
        watcher.withLock { $0?.cancel() }
    }
}
