import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request and its answer over URLSession, with the session's delegate doing the
/// work so that every answer, `401` included, comes back on Linux as on macOS.
///
/// On Linux, swift-corelibs-foundation turns a `401` with a `WWW-Authenticate` header into
/// an authentication challenge, and without a delegate (or with "default handling" and no
/// stored credential) it leaves the task waiting forever
/// (swiftlang/swift-corelibs-foundation#5456). Herald sends exactly such an answer for a
/// wrong master secret or admin token. Here the challenge is declined, which ends the task,
/// and the `401` that already arrived, with its body, is returned.
final class HTTPExchange: NSObject, URLSessionDataDelegate, Sendable {
    private struct State {
        var body = Data()
        var declinedChallenge = false
        var continuation: CheckedContinuation<(Data, HTTPURLResponse), any Error>?
    }

    private let state = Mutex(State())

    /// Sends `request` on a session of its own, made from `configuration`.
    static func perform(_ request: URLRequest, configuration: URLSessionConfiguration) async throws -> (Data, HTTPURLResponse) {
        let exchange = HTTPExchange()
        let session = URLSession(configuration: configuration, delegate: exchange, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        return try await withCheckedThrowingContinuation { continuation in
            exchange.state.withLock { $0.continuation = continuation }
            session.dataTask(with: request).resume()
        }
    }

    /// Sends `request` with the file at `file` as its body, read as it is sent (never
    /// whole in memory).
    static func perform(_ request: URLRequest, fromFile file: URL, configuration: URLSessionConfiguration) async throws -> (Data, HTTPURLResponse) {
        let exchange = HTTPExchange()
        let session = URLSession(configuration: configuration, delegate: exchange, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        return try await withCheckedThrowingContinuation { continuation in
            exchange.state.withLock { $0.continuation = continuation }
            session.uploadTask(with: request, fromFile: file).resume()
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        state.withLock { $0.body.append(data) }
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if canImport(FoundationNetworking)
        state.withLock { $0.declinedChallenge = true }
        completionHandler(.cancelAuthenticationChallenge, nil)
        #else
        // Darwin hands the 401 on by itself when no credential is given.
        completionHandler(.performDefaultHandling, nil)
        #endif
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (body, declined, continuation) = state.withLock { state in
            defer { state.continuation = nil }
            return (state.body, state.declinedChallenge, state.continuation)
        }
        guard let continuation else { return }
        let response = task.response as? HTTPURLResponse
        if let response, error == nil || declined {
            continuation.resume(returning: (body, response))
        } else {
            continuation.resume(throwing: error ?? URLError(.badServerResponse))
        }
    }
}
