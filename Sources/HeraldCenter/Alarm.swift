import NIOConcurrencyHelpers

/// A sleep that a ring ends early: the scheduler sleeps until its next schedule is due,
/// and a changed schedule (a NOTIFY) wakes it. A ring while nobody sleeps is kept for the
/// next sleep, so none is lost between two sleeps; stopping ends every sleep for good.
final class Alarm: Sendable {
    private struct State {
        var rung = false
        var stopped = false
        var sleeper: CheckedContinuation<Void, Never>?
    }

    private let state = NIOLockedValueBox(State())

    var isStopped: Bool { state.withLockedValue { $0.stopped } }

    func ring() {
        state.withLockedValue { state in
            if let sleeper = state.sleeper {
                state.sleeper = nil
                sleeper.resume()
            } else {
                state.rung = true
            }
        }
    }

    func stop() {
        state.withLockedValue { state in
            state.stopped = true
            state.sleeper?.resume()
            state.sleeper = nil
        }
    }

    /// Returns after `duration`, at a ring, or at once if rung (or stopped) meanwhile.
    func sleep(for duration: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: duration) }
            group.addTask { await self.waitForRing() }
            await group.next()
            group.cancelAll()
            // The ring's waiter may still be parked: wake it so the group can end.
            self.state.withLockedValue { state in
                state.sleeper?.resume()
                state.sleeper = nil
            }
        }
    }

    private func waitForRing() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            state.withLockedValue { state in
                if state.rung {
                    state.rung = false
                    continuation.resume()
                } else if state.stopped || Task.isCancelled {
                    continuation.resume()
                } else {
                    state.sleeper = continuation
                }
            }
        }
    }
}
