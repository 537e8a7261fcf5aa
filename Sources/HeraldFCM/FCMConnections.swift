import HeraldHTTP2
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// The HTTP/2 connections the FCM client sends over: a few to one host, each carrying many
/// requests at once, made when first needed and again when one is lost. Requests take them
/// in turn.
final class FCMConnections: Sendable {
    private enum Slot {
        case empty
        case connecting(Task<HTTP2ClientConnection, any Error>)
        case ready(HTTP2ClientConnection)
    }

    let host: String
    let port: Int
    private let sslContext: NIOSSLContext
    private let eventLoopGroup: any EventLoopGroup
    private let state: NIOLockedValueBox<(slots: [Slot], next: Int)>

    init(host: String, port: Int, sslContext: NIOSSLContext, count: Int, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.host = host
        self.port = port
        self.sslContext = sslContext
        self.eventLoopGroup = eventLoopGroup
        state = NIOLockedValueBox((Array(repeating: .empty, count: max(1, count)), 0))
    }

    /// The next connection in turn, made if it isn't there (or was lost).
    func next() async throws -> HTTP2ClientConnection {
        let (index, slot) = state.withLockedValue { state in
            let index = state.next
            state.next = (state.next + 1) % state.slots.count
            return (index, state.slots[index])
        }
        switch slot {
        case .ready(let connection) where connection.isActive:
            return connection
        case .connecting(let task):
            return try await task.value
        default:
            break
        }
        // Another caller may have connected (or begun to) since the slot was read.
        let current = state.withLockedValue { state -> Slot in
            if case .ready(let connection) = state.slots[index], connection.isActive { return state.slots[index] }
            if case .connecting = state.slots[index] { return state.slots[index] }
            let (host, port, sslContext, eventLoop) = (host, port, sslContext, eventLoopGroup.next())
            let task = Task {
                try await HTTP2ClientConnection.connect(
                    host: host,
                    port: port,
                    sslContext: sslContext,
                    serverHostname: Self.isIPAddress(host) ? nil : host,
                    eventLoop: eventLoop,
                    connectTimeout: .seconds(10)
                )
            }
            state.slots[index] = .connecting(task)
            return .connecting(task)
        }
        let task: Task<HTTP2ClientConnection, any Error>
        switch current {
        case .ready(let connection): return connection
        case .connecting(let connecting): task = connecting
        case .empty: preconditionFailure("the slot is connecting or ready once taken")
        }
        do {
            let connection = try await task.value
            state.withLockedValue { $0.slots[index] = .ready(connection) }
            return connection
        } catch {
            state.withLockedValue { $0.slots[index] = .empty }
            throw error
        }
    }

    func closeAll() {
        let slots = state.withLockedValue { state in
            defer { state.slots = state.slots.map { _ in .empty } }
            return state.slots
        }
        for case .ready(let connection) in slots { connection.close() }
    }

    private static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }
}
