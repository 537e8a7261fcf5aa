import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// Runs ``APNsPoolStateMachine`` for real connections and suspended senders: a sender
/// waits (backpressure) until a connection has a free stream, or its deadline passes.
final class APNsConnectionPool: Sendable {
    private struct Waiter {
        var continuation: CheckedContinuation<APNsConnection, any Error>
        var timeout: Scheduled<Void>?
    }

    private struct State {
        var machine: APNsPoolStateMachine
        var connections: [Int: APNsConnection] = [:]
        var waiters: [Int: Waiter] = [:]
        var pendingSettings: [Int: Int] = [:]
        var nextWaiterID = 0
    }

    /// Work to do once the lock is released.
    private struct Effects {
        var resume: [(CheckedContinuation<APNsConnection, any Error>, Result<APNsConnection, any Error>)] = []
        var close: [APNsConnection] = []
    }

    private let state: NIOLockedValueBox<State>
    private let eventLoop: any EventLoop

    init(streamCap: Int, eventLoop: any EventLoop) {
        self.state = NIOLockedValueBox(State(machine: APNsPoolStateMachine(streamCap: streamCap)))
        self.eventLoop = eventLoop
    }

    /// A connection with a free stream (counted as taken), preferring one other than `avoiding`.
    func lease(deadline: NIODeadline, avoiding: Int? = nil) async throws -> APNsConnection {
        let waiterID = state.withLockedValue { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<APNsConnection, any Error>) in
                let effects = state.withLockedValue { state -> Effects in
                    var effects = Effects()
                    switch state.machine.lease(waiterID, avoiding: avoiding) {
                    case .leased(let id):
                        effects.resume.append((continuation, .success(state.connections[id]!)))
                    case .shutdown:
                        effects.resume.append((continuation, .failure(APNsError.shutdown)))
                    case .refused:
                        effects.resume.append((continuation, .failure(APNsError.credentialsRefused)))
                    case .wait:
                        let timeout = eventLoop.scheduleTask(deadline: deadline) { [self] in
                            self.abandon(waiterID, error: APNsError.deadlineExceeded)
                        }
                        state.waiters[waiterID] = Waiter(continuation: continuation, timeout: timeout)
                    }
                    return effects
                }
                perform(effects)
            }
        } onCancel: {
            self.abandon(waiterID, error: CancellationError())
        }
    }

    /// Gives the stream back; `succeeded` when APNs answered 200.
    func release(_ connection: APNsConnection, succeeded: Bool) {
        apply { $0.release(connection.id, succeeded: succeeded) }
    }

    /// Whether APNs answered a 200 on the connection yet.
    func hasSucceeded(_ connectionID: Int) -> Bool {
        state.withLockedValue { $0.machine.connections[connectionID]?.succeeded ?? false }
    }

    /// Stops new streams on the connection and closes it once its streams are done.
    func drain(_ connectionID: Int) {
        apply { $0.drain(connectionID) }
    }

    func added(_ connection: APNsConnection, tokenAuth: Bool) {
        applyWithState { machine, state in
            state.connections[connection.id] = connection
            var actions = machine.connectionReady(connection.id, tokenAuth: tokenAuth)
            if let limit = state.pendingSettings.removeValue(forKey: connection.id) {
                actions += machine.settingsReceived(connection.id, maxConcurrentStreams: limit)
            }
            return actions
        }
    }

    func settingsReceived(_ connectionID: Int, maxConcurrentStreams: Int) {
        applyWithState { machine, state in
            guard machine.connections[connectionID] != nil else {
                state.pendingSettings[connectionID] = maxConcurrentStreams
                return []
            }
            return machine.settingsReceived(connectionID, maxConcurrentStreams: maxConcurrentStreams)
        }
    }

    func removed(_ connectionID: Int) {
        applyWithState { machine, state in
            state.connections[connectionID] = nil
            state.pendingSettings[connectionID] = nil
            return machine.connectionClosed(connectionID)
        }
    }

    func shutdown() {
        apply { $0.shutdown() }
    }

    /// APNs refused the credentials: fails the senders waiting for a stream, and every later lease.
    func refuse() {
        apply { $0.refuse() }
    }

    /// The token a request on this connection carries (see ``APNsTokenPolicy``).
    func token(
        for connectionID: Int,
        shared: APNsProviderToken,
        now: Date,
        policy: APNsTokenPolicy
    ) -> APNsTokenPolicy.ConnectionDecision {
        state.withLockedValue { $0.machine.token(for: connectionID, shared: shared, now: now, policy: policy) }
    }

    /// Connections up and not draining.
    var openConnectionCount: Int {
        state.withLockedValue { $0.machine.connections.values.filter { !$0.draining }.count }
    }

    /// Streams in flight and senders waiting, for tests and metrics.
    var load: (inFlight: Int, waiting: Int) {
        state.withLockedValue { ($0.machine.inFlight, $0.machine.waiting) }
    }

    private func abandon(_ waiterID: Int, error: any Error) {
        let waiter = state.withLockedValue { state -> Waiter? in
            guard state.machine.cancel(waiterID) else { return nil }
            return state.waiters.removeValue(forKey: waiterID)
        }
        waiter?.timeout?.cancel()
        waiter?.continuation.resume(throwing: error)
    }

    private func apply(_ body: (inout APNsPoolStateMachine) -> [APNsPoolStateMachine.Action]) {
        applyWithState { machine, _ in body(&machine) }
    }

    private func applyWithState(_ body: (inout APNsPoolStateMachine, inout State) -> [APNsPoolStateMachine.Action]) {
        let effects = state.withLockedValue { state -> Effects in
            // The machine is taken out while `body` runs, so mutating it copies nothing.
            var machine = state.machine
            state.machine = APNsPoolStateMachine.placeholder
            let actions = body(&machine, &state)
            state.machine = machine
            var effects = Effects()
            for action in actions {
                switch action {
                case .resume(let waiterID, let connectionID):
                    guard let waiter = state.waiters.removeValue(forKey: waiterID) else { continue }
                    waiter.timeout?.cancel()
                    effects.resume.append((waiter.continuation, .success(state.connections[connectionID]!)))
                case .failShutdown(let waiterID):
                    guard let waiter = state.waiters.removeValue(forKey: waiterID) else { continue }
                    waiter.timeout?.cancel()
                    effects.resume.append((waiter.continuation, .failure(APNsError.shutdown)))
                case .failRefused(let waiterID):
                    guard let waiter = state.waiters.removeValue(forKey: waiterID) else { continue }
                    waiter.timeout?.cancel()
                    effects.resume.append((waiter.continuation, .failure(APNsError.credentialsRefused)))
                case .close(let connectionID):
                    if let connection = state.connections[connectionID] { effects.close.append(connection) }
                }
            }
            return effects
        }
        perform(effects)
    }

    private func perform(_ effects: Effects) {
        for (continuation, result) in effects.resume { continuation.resume(with: result) }
        for connection in effects.close { connection.close() }
    }
}
