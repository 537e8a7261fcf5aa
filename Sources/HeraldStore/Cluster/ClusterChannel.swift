import Crypto
import Foundation

/// The NOTIFY channels between nodes. A node's own channel is named from its id (ids are
/// free text, channels identifiers of at most 63 bytes): `herald_node_` and the first 16
/// hex digits of the id's MD5, the same in SQL (senders) and here (the listener).
public enum ClusterChannel {
    /// Every node listens here: a node joined (peers refresh their view at once).
    public static let cluster = "herald_cluster"

    /// The channel of `node`.
    public static func node(_ node: String) -> String {
        "herald_node_" + Insecure.MD5.hash(data: Array(node.utf8)).prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    /// The SQL expression of the channel of the node whose id is `expression`.
    static func sql(_ expression: String) -> String {
        "'herald_node_' || left(md5(\(expression)), 16)"
    }
}
