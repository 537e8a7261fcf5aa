import Configuration

/// A section of Herald's configuration (`mqtt`, `center`, `apns.circuitBreaker`): reads
/// the section's keys through a scoped ``ConfigReader`` and checks their values, reporting
/// a bad one as a ``ConfigurationError`` under its full key.
///
/// Values that don't convert to the type read (`HERALD_HTTP_PORT=http`) fall back to the
/// default, as swift-configuration's non-throwing readers do.
public struct ConfigSection: Sendable {
    /// The section's key, relative to the reader it was made from (empty: that reader).
    public let name: String
    /// The reader scoped to the section.
    public let reader: ConfigReader

    /// The section `name` of `reader` (`""`: the reader itself).
    public init(_ reader: ConfigReader, _ name: String = "") {
        self.name = name
        self.reader = name.isEmpty ? reader : reader.scoped(to: ConfigKey(name))
    }

    /// A section inside this one.
    public func section(_ name: String) -> ConfigSection {
        ConfigSection(reader, name, parent: self.name)
    }

    private init(_ reader: ConfigReader, _ name: String, parent: String) {
        self.name = parent.isEmpty ? name : "\(parent).\(name)"
        self.reader = reader.scoped(to: ConfigKey(name))
    }

    /// The full key of `key` (`maxInFlight` in `mqtt` is `mqtt.maxInFlight`).
    public func key(_ key: String) -> String {
        name.isEmpty ? key : "\(name).\(key)"
    }

    /// An error about `key` of this section.
    public func error(_ key: String, _ problem: String) -> ConfigurationError {
        ConfigurationError(key: self.key(key), problem)
    }

    // MARK: - Reading

    public func string(_ key: String, default defaultValue: String) -> String {
        reader.string(forKey: ConfigKey(key), default: defaultValue)
    }

    /// A string that may be unset; empty counts as unset.
    public func optionalString(_ key: String, isSecret: Bool = false) -> String? {
        reader.string(forKey: ConfigKey(key), isSecret: isSecret).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// An integer in `range`; outside it, `problem` (default: `must be 1 to 16`, with
    /// `unit` after the bounds when given).
    public func int(
        _ key: String,
        default defaultValue: Int,
        in range: ClosedRange<Int>,
        unit: String? = nil,
        problem: String? = nil
    ) throws -> Int {
        let value = reader.int(forKey: ConfigKey(key), default: defaultValue)
        guard range.contains(value) else {
            throw error(key, problem ?? "must be \(range.lowerBound) to \(range.upperBound)\(unit.map { " \($0)" } ?? "")")
        }
        return value
    }

    /// A duration given in whole seconds, in `range` seconds (`defaultValue` is rounded down
    /// to whole seconds).
    public func seconds(_ key: String, default defaultValue: Duration, in range: ClosedRange<Int>) throws -> Duration {
        .seconds(try int(key, default: Int(defaultValue.components.seconds), in: range, unit: "seconds"))
    }

    /// A duration given in milliseconds, in `range` milliseconds (`defaultValue` is rounded
    /// down to whole milliseconds).
    public func milliseconds(_ key: String, default defaultValue: Duration, in range: ClosedRange<Int>) throws -> Duration {
        let (seconds, attoseconds) = defaultValue.components
        let milliseconds = Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
        return .milliseconds(try int(key, default: milliseconds, in: range, unit: "milliseconds"))
    }

    /// A TCP port (0: any free one).
    public func port(_ key: String, default defaultValue: Int) throws -> Int {
        let value = reader.int(forKey: ConfigKey(key), default: defaultValue)
        guard (0...65535).contains(value) else { throw error(key, "\(value) is not a port") }
        return value
    }

    /// A number in `range`.
    public func double(_ key: String, default defaultValue: Double, in range: ClosedRange<Double>) throws -> Double {
        let value = reader.double(forKey: ConfigKey(key), default: defaultValue)
        guard range.contains(value) else { throw error(key, "must be \(Self.text(range.lowerBound)) to \(Self.text(range.upperBound))") }
        return value
    }

    /// `1` for 1.0, `0.5` for 0.5.
    private static func text(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
    }
}
