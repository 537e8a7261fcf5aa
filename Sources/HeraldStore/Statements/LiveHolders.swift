/// The one place "a live node other than this one holds the device" is written in SQL.
///
/// A device's session row names the node that holds its connection (`device_sessions`,
/// at most one per device); that node counts while its heartbeat is newer than the
/// cluster's liveness bound (a node stopped longer is dead, its sessions cleared when a
/// peer sweeps it). The statements that route copies to their devices' nodes
/// (``CenterStore/holders(of:except:deadAfter:)``,
/// ``CenterStore/routeToHolders(_:except:deadAfter:hops:)`` and the accepting statement)
/// embed ``condition(session:node:except:deadAfter:)``.
enum LiveHolders {
    /// The condition on a `device_sessions` row (alias `session`) joined with its `nodes`
    /// row (alias `node`, on `node_id`): held by a node other than `except` whose heartbeat
    /// is newer than `deadAfter` seconds. `except` and `deadAfter` are SQL expressions (a
    /// parameter, a column of a parameters row).
    static func condition(session: String = "s", node: String = "n", except: String, deadAfter: String) -> String {
        "\(session).node_id <> \(except) AND \(node).heartbeat_at > now() - make_interval(secs => \(deadAfter))"
    }
}
