/// A configuration value Herald can't use, reported under its key:
/// `mqtt.maxInFlight: must be 1 to 65535`.
public struct ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The full key (`mqtt.maxInFlight`), or the section the problem is about (`mqtt.tls`).
    public var key: String
    /// What is wrong with it, said as a rule (`must be 1 to 16`).
    public var problem: String

    public init(key: String, _ problem: String) {
        self.key = key
        self.problem = problem
    }

    public var description: String { "\(key): \(problem)" }
}
