import Foundation

/// The addresses Herald's outbound requests may reach: webhooks, JPush callbacks and apps'
/// SMS providers, whose URLs an operator names. They may not reach the inside of the network
/// Herald runs in (loopback, link-local such as a cloud's metadata service at
/// 169.254.169.254, private and unique-local ranges, unspecified, multicast and reserved
/// addresses), unless the instance's administrator allows a range (`outbound.allowRanges`):
/// for a receiver on the same host, or a provider on the private network.
///
/// The rule is applied to every address a host name resolves to, before connecting, and to a
/// literal address in a URL when the API takes it.
public struct OutboundAddressRule: Sendable, Hashable {
    /// Ranges reachable although internal.
    public var allowed: [IPRange]

    public init(allowed: [IPRange] = []) {
        self.allowed = allowed
    }

    /// Reads a comma- or space-separated list of ranges (`127.0.0.0/8, ::1`), or names the
    /// first entry that is not a range.
    public static func ranges(_ text: String) -> Result<[IPRange], InvalidRange> {
        var ranges: [IPRange] = []
        for entry in text.split(whereSeparator: { $0 == "," || $0 == " " }) {
            guard let range = IPRange(entry) else { return .failure(InvalidRange(entry: String(entry))) }
            ranges.append(range)
        }
        return .success(ranges)
    }

    /// An entry of a list of ranges that is not one.
    public struct InvalidRange: Error, Hashable {
        public var entry: String
    }

    /// Why a request may not go to `address` ("loopback", "private"...), nil when it may.
    public func refusal(_ address: IPAddress) -> String? {
        if allowed.contains(where: { $0.contains(address) }) { return nil }
        if let kind = Self.internalRanges.first(where: { $0.range.contains(address) })?.kind { return kind }
        return address.embeddedIPv4.flatMap(refusal)
    }

    /// For a URL's host: when it is a literal address (in any form a resolver reads, such as
    /// `2130706433` or `[fe80::1]`), why it is refused; nil for a permitted address or a name,
    /// which is checked once resolved.
    public func refusal(host: String) -> String? {
        IPAddress(host).flatMap(refusal)
    }

    /// For an http(s) URL: when its host is a literal address that is refused, why; nil
    /// otherwise (a name is checked once resolved).
    public func refusal(url: String) -> String? {
        Self.host(of: url).flatMap { refusal(host: $0) }
    }

    /// The host of an absolute URL, without brackets, port or user info.
    public static func host(of url: String) -> String? {
        guard let scheme = url.range(of: "://") else { return nil }
        var authority = url[scheme.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            return String(authority[authority.index(after: authority.startIndex)..<close])
        }
        return String(authority.prefix { $0 != ":" })
    }

    /// The ranges refused unless allowed, each with what it is.
    static let internalRanges: [(range: IPRange, kind: String)] = [
        ("0.0.0.0/8", "unspecified"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "private"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "reserved"),
        ("192.168.0.0/16", "private"),
        ("198.18.0.0/15", "reserved"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved"),
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "private"),
        ("fc00::/7", "private"),
        ("ff00::/8", "multicast"),
    ].map { (IPRange($0.0)!, $0.1) }
}
