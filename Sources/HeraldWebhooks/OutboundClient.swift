import AsyncHTTPClient
import HeraldCore
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Herald's requests to the addresses operators name (webhooks, JPush callbacks, apps' SMS
/// providers), over HTTP/1.1 with keep-alive:
/// - the host's addresses are resolved first and every one of them must pass
///   ``OutboundAddressRule`` (a literal address too, in whatever form);
/// - a redirect is not followed: a 3xx is the answer, which callers count as a failure;
/// - each request, resolution included, ends by its deadline whatever the receiver does.
///
/// The client resolves the host again when it connects (within the resolver's cache), so a
/// name whose records change between the two lookups is not caught; the addresses a name
/// gives when checked are.
public struct OutboundClient: OutboundPosting {
    public let rule: OutboundAddressRule

    public init(rule: OutboundAddressRule) {
        self.rule = rule
    }

    /// One client for the process, as AsyncHTTPClient's shared one, but following no
    /// redirect (a receiver's 307 would otherwise send a signed batch, or a request to the
    /// admin API, wherever it pleases).
    static let client = HTTPClient(
        eventLoopGroup: HTTPClient.defaultEventLoopGroup,
        configuration: HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(10), read: .seconds(120)),
            decompression: .disabled
        )
    )

    public func post(_ url: String, headers: [(name: String, value: String)], body: [UInt8], timeout: Duration) async -> OutboundAnswer {
        guard PushCallback.isHTTPURL(url), let host = OutboundAddressRule.host(of: url), !host.isEmpty else {
            return .failed(reason: "not an http or https URL")
        }
        do {
            return try await Self.within(timeout) {
                if let refusal = try await self.refusal(host: host) { return .failed(reason: refusal) }
                var request = HTTPClientRequest(url: url)
                request.method = .POST
                for header in headers { request.headers.add(name: header.name, value: header.value) }
                request.body = .bytes(ByteBuffer(bytes: body))
                let response = try await Self.client.execute(request, timeout: .init(timeout))
                // A little of the answer is read, so the connection can be reused.
                let text = (try? await response.body.collect(upTo: 4096)).map { String(buffer: $0) } ?? ""
                return .answered(status: Int(response.status.code), body: text)
            }
        } catch is TimedOut {
            return .failed(reason: "no answer within \(timeout)")
        } catch {
            return .failed(reason: Self.describe(error))
        }
    }

    /// Why `host` may not be reached: a literal address the rule refuses, or a name one of
    /// whose addresses it refuses. Nil when it may.
    func refusal(host: String) async throws -> String? {
        if let refusal = rule.refusal(host: host) { return "address refused (\(refusal))" }
        let addresses: [IPAddress]
        if let literal = IPAddress(host) {
            addresses = [literal]
        } else {
            addresses = try await NIOThreadPool.singleton.runIfActive { try Self.resolve(host) }
        }
        for address in addresses {
            if let refusal = rule.refusal(address) { return "address refused (\(refusal)): \(host) is \(address)" }
        }
        return nil
    }

    /// Every IPv4 and IPv6 address of `host` (getaddrinfo, which blocks: run off the loops).
    static func resolve(_ host: String) throws -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Darwin)
        hints.ai_socktype = SOCK_STREAM
        #else
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let code = getaddrinfo(host, nil, &hints, &list)
        guard code == 0, let first = list else { throw ResolutionFailed(host: host) }
        defer { freeaddrinfo(first) }
        var addresses: [IPAddress] = []
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let info = next {
            next = info.pointee.ai_next
            guard let socketAddress = info.pointee.ai_addr else { continue }
            switch info.pointee.ai_family {
            case AF_INET:
                let address = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                withUnsafeBytes(of: address) { if let ip = IPAddress(bytes: Array($0)) { addresses.append(ip) } }
            case AF_INET6:
                let address = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                withUnsafeBytes(of: address) { if let ip = IPAddress(bytes: Array($0)) { addresses.append(ip) } }
            default:
                continue
            }
        }
        guard !addresses.isEmpty else { throw ResolutionFailed(host: host) }
        return addresses
    }

    struct ResolutionFailed: Error, CustomStringConvertible {
        var host: String
        var description: String { "cannot resolve \(host)" }
    }

    struct TimedOut: Error {}

    /// `operation`'s result, or ``TimedOut`` once `timeout` has passed (the operation is
    /// cancelled then: a hung receiver doesn't hold its caller).
    static func within<Result: Sendable>(_ timeout: Duration, _ operation: @escaping @Sendable () async throws -> Result) async throws -> Result {
        try await withThrowingTaskGroup(of: Result.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw TimedOut()
            }
            defer { group.cancelAll() }
            guard let result = try await group.next() else { throw TimedOut() }
            return result
        }
    }

    /// A short, label-safe description of a transport error.
    static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError { return "\(error)" }
        return String(describing: error).prefix(200).description
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
