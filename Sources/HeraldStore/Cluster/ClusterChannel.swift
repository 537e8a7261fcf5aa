/// The NOTIFY channels between nodes. A node's own channel is named from its id (ids are
/// free text, channels identifiers of at most 63 bytes), in SQL on both sides.
public enum ClusterChannel {
    /// Every node listens here: a node joined (peers refresh their view at once).
    public static let cluster = "herald_cluster"

    /// The SQL expression of the channel of the node whose id is `expression`.
    static func sql(_ expression: String) -> String {
        "'herald_node_' || left(md5(\(expression)), 16)"
    }
}
