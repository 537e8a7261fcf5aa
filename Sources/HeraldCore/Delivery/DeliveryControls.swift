/// An app's controls on its operations pushes (JPush's `options.classification` 0, the
/// default; system pushes, 1, are exempt), in each device's local time: quiet hours, when
/// such a push waits until the window ends or is dropped, and a cap on how many reach one
/// device in a local day.
public struct DeliveryControls: Sendable, Hashable {
    public var quietHours: QuietHours?
    /// Operations pushes one device gets at most per local day.
    public var dailyCap: Int?

    public init(quietHours: QuietHours? = nil, dailyCap: Int? = nil) {
        self.quietHours = quietHours
        self.dailyCap = dailyCap
    }

    /// No control is set: every push goes as it comes.
    public var isEmpty: Bool { quietHours == nil && dailyCap == nil }

    /// Whether the controls apply to a push of this `classification` (nil: JPush's default,
    /// operations).
    public func apply(toClassification classification: Int?) -> Bool {
        !isEmpty && classification != Self.system
    }

    /// JPush's `classification` of a system push.
    public static let system = 1
    /// The largest daily cap.
    public static let maxDailyCap = 1000
}

/// A daily window of local wall-clock time, from `start` to `end` (crossing midnight when
/// `end` is earlier than `start`), and what happens to an operations push that finds a
/// device inside it.
public struct QuietHours: Sendable, Hashable {
    public enum Action: String, Sendable, Hashable, CaseIterable {
        /// The copy waits in Herald, not in the device's inbox, until the window ends.
        case hold
        /// The copy is not sent (reported as dropped, reason `QuietHours`).
        case drop
    }

    /// Seconds after local midnight.
    public var start: Int
    public var end: Int
    public var action: Action

    public init(start: Int, end: Int, action: Action) {
        self.start = start
        self.end = end
        self.action = action
    }

    /// `HH:MM` or `HH:MM:SS`, 00:00 to 23:59:59, as seconds after midnight.
    public static func seconds(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (2...3).contains(parts.count), parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isASCIIDigit) }) else { return nil }
        let numbers = parts.compactMap { Int($0) }
        guard numbers[0] < 24, numbers[1] < 60, numbers.count == 2 || numbers[2] < 60 else { return nil }
        return numbers[0] * 3600 + numbers[1] * 60 + (numbers.count == 3 ? numbers[2] : 0)
    }

    /// Seconds after midnight as `HH:MM:SS`.
    public static func text(_ seconds: Int) -> String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(seconds / 3600)):\(two(seconds / 60 % 60)):\(two(seconds % 60))"
    }

    /// Whether the local time `seconds` after midnight is inside the window.
    public func contains(_ seconds: Int) -> Bool {
        start <= end ? (start <= seconds && seconds < end) : (seconds >= start || seconds < end)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
