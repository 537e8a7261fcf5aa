import Configuration
import Foundation

/// What several components of one Herald node share: its name and the recall window.
/// The gateway, the message center and the API each take these from here instead of having
/// defaults of their own.
public struct NodeConfiguration: Sendable, Hashable {
    /// This node's name, on the jobs it leases (the message center).
    public var nodeID: String
    /// How long after sending a message can be recalled (the API checks it, the center
    /// keeps APNs copies recallable that long).
    public var recallWindow: Duration

    /// The default node name: the host name.
    public static let defaultNodeID: String = ProcessInfo.processInfo.hostName
    /// The default recall window: a day.
    public static let defaultRecallWindow: Duration = .seconds(86_400)

    public init(nodeID: String = defaultNodeID, recallWindow: Duration = defaultRecallWindow) {
        self.nodeID = nodeID
        self.recallWindow = recallWindow
    }
}

extension NodeConfiguration {
    /// Reads the node's settings from Herald's configuration.
    ///
    /// Configuration keys:
    /// - `nodeID` (string, default: the host name): this node's name.
    /// - `center.recallWindow` (int, seconds, default: 86400, 60 to 864000): how long after
    ///   sending a message can be recalled.
    ///
    /// - Parameter reader: Herald's configuration (not scoped: the keys are at its root).
    /// - Throws: ``ConfigurationError`` naming the key of a value out of range.
    public init(reader: ConfigReader) throws {
        let root = ConfigSection(reader)
        self.init(
            nodeID: root.string("nodeID", default: Self.defaultNodeID),
            recallWindow: try root.section("center").seconds("recallWindow", default: Self.defaultRecallWindow, in: 60...864_000)
        )
    }
}
