import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Sends pushes to `POST /v3/push` over several keep-alive connections, one request at a
/// time on each: paced (open loop, a push due every 1/rate s) or flat out (closed loop).
///
/// Each push carries its send time (wall clock, ns) for the devices. A paced push carries
/// the time it was due, not the time a connection came free, so a slow server shows as
/// latency rather than as a lower rate.
final class PushLoad: Sendable {
    private let connections: NIOLockedValueBox<[HTTPConnection]>
    private let group: MultiThreadedEventLoopGroup
    private let host: String
    /// The API ports the connections go to: connection `slot` to `ports[slot % ports.count]`.
    let ports: [Int]
    let authorization: String

    /// What one run of pushes achieved, as the API answered it.
    struct Outcome: Sendable {
        var sent = 0
        var accepted = 0
        /// Answers other than 200, by status.
        var refused: [Int: Int] = [:]
        /// Requests that got no answer (connection lost, timed out).
        var failed = 0
        var firstProblem: String?
        /// Request to response, ns, for the 200s.
        var responseTimes: [Int64] = []
        /// Wall clock of the first send and the last answer, ns.
        var started: Int64 = 0
        var finished: Int64 = 0

        var seconds: Double { Double(max(finished - started, 1)) / 1e9 }
        var acceptedPerSecond: Double { Double(accepted) / seconds }

        /// One request's answer (or why it got none), sent at `sentAt`.
        mutating func record(_ result: Result<HTTPConnection.Response, any Error>, sentAt: Int64) {
            sent += 1
            let now = WallClock.nanoseconds()
            finished = max(finished, now)
            switch result {
            case .success(let response) where response.status == 200:
                accepted += 1
                responseTimes.append(now - sentAt)
            case .success(let response):
                refused[response.status, default: 0] += 1
                firstProblem = firstProblem ?? "HTTP \(response.status): \(String(buffer: response.body).prefix(300))"
            case .failure(let error):
                failed += 1
                firstProblem = firstProblem ?? "\(error)"
            }
        }

        mutating func merge(_ other: Outcome) {
            sent += other.sent
            accepted += other.accepted
            refused.merge(other.refused, uniquingKeysWith: +)
            failed += other.failed
            firstProblem = firstProblem ?? other.firstProblem
            responseTimes += other.responseTimes
            finished = max(finished, other.finished)
        }
    }

    private init(connections: [HTTPConnection], group: MultiThreadedEventLoopGroup, host: String, ports: [Int], authorization: String) {
        self.connections = NIOLockedValueBox(connections)
        self.group = group
        self.host = host
        self.ports = ports
        self.authorization = authorization
    }

    /// Opens `count` connections on an event loop of their own (the server has its own).
    static func connect(host: String, port: Int, count: Int, appKey: String, masterSecret: String) async throws -> PushLoad {
        try await connect(host: host, ports: [port], count: count, appKey: appKey, masterSecret: masterSecret)
    }

    /// Opens `count` connections spread over `ports` (several nodes' APIs), in turn.
    static func connect(host: String, ports: [Int], count: Int, appKey: String, masterSecret: String) async throws -> PushLoad {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            var connections: [HTTPConnection] = []
            for slot in 0..<count {
                connections.append(try await HTTPConnection.connect(host: host, port: ports[slot % ports.count], group: group))
            }
            let basic = Data("\(appKey):\(masterSecret)".utf8).base64EncodedString()
            return PushLoad(connections: connections, group: group, host: host, ports: ports, authorization: "Basic \(basic)")
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    var connectionCount: Int { connections.withLockedValue { $0.count } }

    /// Sends pushes until `count` were sent or `duration` passed, whichever comes first,
    /// over the first `using` connections (all when nil). `body(index, sentAt)` is the
    /// request body of push `index`, stamped with `sentAt`.
    func run(
        count: Int? = nil,
        duration: Duration? = nil,
        rate: Double? = nil,
        using: Int? = nil,
        body: @escaping @Sendable (Int, Int64) -> ByteBuffer
    ) async -> Outcome {
        await run(count: count, duration: duration, rate: rate, using: using) { _, index, sentAt in body(index, sentAt) }
    }

    /// The same, with `body(slot, index, sentAt)` told which connection sends the push
    /// (so which port: a push can then be for a device on another node).
    func run(
        count: Int? = nil,
        duration: Duration? = nil,
        rate: Double? = nil,
        using: Int? = nil,
        body: @escaping @Sendable (Int, Int, Int64) -> ByteBuffer
    ) async -> Outcome {
        let width = min(using ?? connectionCount, connectionCount)
        let next = NIOLockedValueBox(0)
        let startInstant = ContinuousClock.now
        let startWall = WallClock.nanoseconds()
        let end = duration.map { startInstant + $0 }
        var total = Outcome()
        total.started = startWall
        if rate == nil, count == nil, let duration {
            total.merge(await backToBack(for: duration, width: width, body: body))
            return total
        }
        await withTaskGroup(of: Outcome.self) { group in
            for slot in 0..<width {
                group.addTask {
                    var outcome = Outcome()
                    while true {
                        let index = next.withLockedValue { value -> Int in
                            defer { value += 1 }
                            return value
                        }
                        if let count, index >= count { break }
                        var sentAt = WallClock.nanoseconds()
                        if let rate {
                            let offset = Duration.nanoseconds(Int64(Double(index) / rate * 1e9))
                            if let end, startInstant + offset >= end { break }
                            try? await Task.sleep(until: startInstant + offset, clock: .continuous)
                            sentAt = startWall + Int64(Double(index) / rate * 1e9)
                        } else if let end, ContinuousClock.now >= end {
                            break
                        }
                        await self.send(slot: slot, body: body(slot, index, sentAt), sentAt: sentAt, into: &outcome)
                    }
                    return outcome
                }
            }
            for await outcome in group { total.merge(outcome) }
        }
        return total
    }

    /// Flat out: every connection sends its next push as soon as the last one is answered,
    /// on its event loop (see ``HTTPConnection/postBackToBack``), for `duration`.
    private func backToBack(for duration: Duration, width: Int, body: @escaping @Sendable (Int, Int, Int64) -> ByteBuffer) async -> Outcome {
        let end = NIODeadline.now() + TimeAmount(duration)
        let next = NIOLockedValueBox(0)
        let outcome = NIOLockedValueBox(Outcome())
        await withTaskGroup(of: Void.self) { group in
            for slot in 0..<width {
                group.addTask {
                    guard let connection = try? await self.connection(slot) else { return }
                    await connection.postBackToBack(
                        "/v3/push",
                        authorization: self.authorization,
                        deadline: end + .seconds(10),
                        next: {
                            guard NIODeadline.now() < end else { return nil }
                            let index = next.withLockedValue { value -> Int in
                                defer { value += 1 }
                                return value
                            }
                            let sentAt = WallClock.nanoseconds()
                            return (body(slot, index, sentAt), sentAt)
                        },
                        answered: { result, sentAt in
                            outcome.withLockedValue { $0.record(result, sentAt: sentAt) }
                        }
                    )
                }
            }
        }
        return outcome.withLockedValue { $0 }
    }

    private func send(slot: Int, body: ByteBuffer, sentAt: Int64, into outcome: inout Outcome) async {
        do {
            let connection = try await connection(slot)
            outcome.record(.success(try await connection.post("/v3/push", body: body, authorization: authorization)), sentAt: sentAt)
        } catch {
            outcome.record(.failure(error), sentAt: sentAt)
        }
    }

    /// The slot's connection, reopened if the server closed it.
    private func connection(_ slot: Int) async throws -> HTTPConnection {
        let current = connections.withLockedValue { $0[slot] }
        if current.isActive { return current }
        let fresh = try await HTTPConnection.connect(host: host, port: ports[slot % ports.count], group: group)
        connections.withLockedValue { $0[slot] = fresh }
        return fresh
    }

    func close() async {
        for connection in connections.withLockedValue({ $0 }) { await connection.close() }
        try? await group.shutdownGracefully()
    }
}
