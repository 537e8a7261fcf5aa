import Foundation

/// Jittered exponential backoff for reconnecting: base 1 s, factor 2, capped at 5 minutes,
/// each delay varied by ±30 % so a server restart doesn't bring every device back at once.
public struct Backoff: Sendable, Hashable {
    public var base: Duration
    public var factor: Double
    public var cap: Duration
    public var jitter: Double

    public init(base: Duration = .seconds(1), factor: Double = 2, cap: Duration = .seconds(300), jitter: Double = 0.3) {
        self.base = base
        self.factor = factor
        self.cap = cap
        self.jitter = jitter
    }

    /// The delay before reconnect attempt `attempt` (0 for the first retry).
    public func delay<G: RandomNumberGenerator>(attempt: Int, using generator: inout G) -> Duration {
        let baseSeconds = Double(base.components.seconds) + Double(base.components.attoseconds) / 1e18
        let capSeconds = Double(cap.components.seconds) + Double(cap.components.attoseconds) / 1e18
        let exponential = min(baseSeconds * pow(factor, Double(min(attempt, 64))), capSeconds)
        let varied = exponential * Double.random(in: (1 - jitter)...(1 + jitter), using: &generator)
        return .milliseconds(Int64(varied * 1000))
    }

    public func delay(attempt: Int) -> Duration {
        var generator = SystemRandomNumberGenerator()
        return delay(attempt: attempt, using: &generator)
    }
}
