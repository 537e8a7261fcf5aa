import Foundation
import HTTPTypes
import HeraldTestSupport
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle

/// A real HTTP server on a free local port that receives webhook and callback requests:
/// it records each one (headers and body) and answers with the status `respond` gives for
/// the request's index (from 0). A 3xx answer sends `Location:` ``redirectTarget``, which
/// records what reaches it too; a path told to ``hang(_:)`` gets no answer meanwhile.
public final class TestReceiver: Sendable {
    /// A request the receiver got, and what it answered.
    public struct Received: Sendable {
        public var path: String
        public var headers: [String: String]
        public var body: [UInt8]
        public var status: Int

        /// The body as typed JSON.
        public var json: JSON { (try? JSONDecoder().decode(JSON.self, from: Data(body))) ?? .null }
    }

    private let received = NIOLockedValueBox<[Received]>([])
    private let respond: NIOLockedValueBox<@Sendable (Int) -> Int>
    private let hanging = NIOLockedValueBox<(paths: Set<String>, stopped: Bool)>(([], false))
    public let port: Int

    private init(port: Int, respond: @escaping @Sendable (Int) -> Int) {
        self.port = port
        self.respond = NIOLockedValueBox(respond)
    }

    /// `http://127.0.0.1:<port><path>`.
    public func url(_ path: String = "/hook") -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Every request so far.
    public var requests: [Received] { received.withLockedValue { $0 } }
    /// The requests answered 2xx.
    public var accepted: [Received] { requests.filter { (200..<300).contains($0.status) } }

    /// Where a 3xx answer points: this receiver's `/redirected`.
    public var redirectTarget: String { url("/redirected") }

    /// Requests to `path` (from now on, and those waiting) get no answer until
    /// ``stopHanging(_:)`` or the receiver stops; they are recorded when they arrive.
    public func hang(_ path: String) {
        hanging.withLockedValue { _ = $0.paths.insert(path) }
    }

    /// Requests to `path` are answered again.
    public func stopHanging(_ path: String) {
        hanging.withLockedValue { _ = $0.paths.remove(path) }
    }

    /// Answers later requests with `respond` instead.
    public func answer(_ respond: @escaping @Sendable (Int) -> Int) {
        self.respond.withLockedValue { $0 = respond }
    }

    /// Waits until `condition` holds for the requests (false after `timeout`).
    public func wait(timeout: Duration = .seconds(15), until condition: @Sendable ([Received]) -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(requests) { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return condition(requests)
    }

    fileprivate func handle(_ request: Request) async throws -> Response {
        let body = try await request.body.collect(upTo: 1 << 20)
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        let path = request.uri.path
        let status = received.withLockedValue { received in
            let status = path == "/redirected" ? 200 : respond.withLockedValue { $0 }(received.count)
            received.append(Received(path: path, headers: headers, body: Array(buffer: body), status: status))
            return status
        }
        while hanging.withLockedValue({ $0.paths.contains(path) && !$0.stopped }) {
            try await Task.sleep(for: .milliseconds(20))
        }
        var response = Response(status: HTTPResponse.Status(code: status), body: .init(byteBuffer: ByteBuffer(string: "ok")))
        if (300..<400).contains(status) { response.headers[.location] = redirectTarget }
        return response
    }

    /// Runs a receiver for `body`, then stops it.
    public static func run<Result: Sendable>(
        respond: @escaping @Sendable (Int) -> Int = { _ in 200 },
        _ body: @Sendable (TestReceiver) async throws -> Result
    ) async throws -> Result {
        let box = NIOLockedValueBox<TestReceiver?>(nil)
        let router = Router()
        for method in [HTTPRequest.Method.post, .get, .put] {
            router.on("**", method: method) { request, _ in
                guard let receiver = box.withLockedValue({ $0 }) else { return Response(status: .serviceUnavailable) }
                return try await receiver.handle(request)
            }
        }
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            },
            logger: TestDatabase.logger
        )
        var configuration = ServiceGroupConfiguration(services: [app], gracefulShutdownSignals: [], logger: TestDatabase.logger)
        configuration.maximumGracefulShutdownDuration = .seconds(5)
        let group = ServiceGroup(configuration: configuration)
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            do {
                guard let port = await ports.first(where: { _ in true }) else { throw TestFailure("the receiver did not listen") }
                let receiver = TestReceiver(port: port, respond: respond)
                box.withLockedValue { $0 = receiver }
                let result: Result
                do {
                    result = try await body(receiver)
                } catch {
                    receiver.hanging.withLockedValue { $0.stopped = true }
                    throw error
                }
                receiver.hanging.withLockedValue { $0.stopped = true }
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
                return result
            } catch {
                await group.triggerGracefulShutdown()
                try? await tasks.waitForAll()
                throw error
            }
        }
    }
}
