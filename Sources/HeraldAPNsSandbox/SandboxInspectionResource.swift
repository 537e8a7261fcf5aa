/// More of a local sandbox shown at the inspection endpoint (``SandboxInspectionServer``):
/// a resource answers the paths under its `name` (`/sms`, `/sms/faults`), so a sandbox of
/// another module (the SMS sandbox) is inspected at the same address as the APNs one.
public protocol SandboxInspectionResource: Sendable {
    /// The first path segment it answers.
    var name: String { get }

    /// The answer to `method` on `/name/segments...`.
    func respond(method: String, segments: [String], query: [String: String], body: [UInt8]) -> SandboxInspectionAnswer
}

/// A status and a JSON value (what `JSONSerialization` writes).
public struct SandboxInspectionAnswer {
    public var status: Int
    public var json: Any

    public init(status: Int = 200, json: Any) {
        self.status = status
        self.json = json
    }

    public static func error(_ status: Int, _ message: String) -> SandboxInspectionAnswer {
        SandboxInspectionAnswer(status: status, json: ["error": message])
    }
}
