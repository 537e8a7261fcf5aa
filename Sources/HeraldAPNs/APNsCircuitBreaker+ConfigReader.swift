import Configuration
import HeraldCore

extension APNsCircuitBreaker.Configuration {
    /// Reads the circuit breaker's settings from Herald's configuration.
    ///
    /// Configuration keys:
    /// - `apns.circuitBreaker.failureThreshold` (int, default: 3, 1 to 1000): 5xx answers in a
    ///   row that open the circuit.
    /// - `apns.circuitBreaker.minimumOpen` (int, seconds, default: 1, 1 to 3600): the first
    ///   opening's length; each opening after a failed probe doubles it.
    /// - `apns.circuitBreaker.maximumOpen` (int, seconds, default: 60, 1 to 86400, at least
    ///   the minimum): the longest opening.
    /// - `apns.circuitBreaker.jitter` (number, default: 0.2, 0 to 1): up to this fraction of
    ///   an opening is taken off at random.
    ///
    /// - Parameter reader: Herald's configuration (not scoped: the keys are at its root).
    /// - Throws: ``ConfigurationError`` naming the key of a value out of range.
    public init(reader: ConfigReader) throws {
        let section = ConfigSection(reader, "apns.circuitBreaker")
        self.init()
        failureThreshold = try section.int("failureThreshold", default: failureThreshold, in: 1...1000)
        minimumOpen = try section.seconds("minimumOpen", default: minimumOpen, in: 1...3600)
        maximumOpen = try section.seconds("maximumOpen", default: maximumOpen, in: 1...86_400)
        jitter = try section.double("jitter", default: jitter, in: 0...1)
        guard minimumOpen <= maximumOpen else {
            throw section.error("minimumOpen", "must not be more than \(section.key("maximumOpen"))")
        }
    }
}
