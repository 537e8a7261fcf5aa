/// Renders a delivery report as one line: a stacked bar of where the copies are, the share
/// routed, and the counts.
///
/// ```
/// [####################========xxxx++++....]  90%  targeted 10  tcp 5  apns 2  failed 1  waiting 1  opened 0
/// ```
///
/// `#` delivered over TCP, `=` sent to APNs, `x` failed, `+` waiting for an offline
/// device, `~` expired, recalled or replaced, `.` not routed yet. With colour the segments
/// are green, cyan, red, yellow and grey blocks.
struct ProgressBar {
    /// Whether to use ANSI colours and block characters; plain ASCII otherwise.
    var color: Bool
    /// The terminal's width; the bar shrinks to fit the counts.
    var width: Int = 80

    private struct Segment {
        var count: Int
        var plain: Character
        var block: Character
        var code: String
    }

    /// The line for `report`, without a newline.
    func render(_ report: ReceivedReport) -> String {
        let counts = Self.counts(report)
        let barWidth = max(10, min(40, width - counts.count - 10))
        let segments = [
            Segment(count: report.deliveredTCP, plain: "#", block: "█", code: "\u{1B}[32m"),
            Segment(count: report.sentAPNs + report.sentFCM, plain: "=", block: "█", code: "\u{1B}[36m"),
            Segment(count: report.failedAPNs, plain: "x", block: "█", code: "\u{1B}[31m"),
            Segment(count: report.waiting, plain: "+", block: "▒", code: "\u{1B}[33m"),
            Segment(count: report.expired + report.recalled + report.replaced, plain: "~", block: "▒", code: "\u{1B}[90m"),
        ]
        let total = max(report.targeted, segments.reduce(0) { $0 + $1.count }, 1)
        var bar = ""
        var filled = 0
        var cumulative = 0
        for segment in segments {
            cumulative += segment.count
            let boundary = min(barWidth, Int((Double(cumulative) / Double(total) * Double(barWidth)).rounded()))
            let cells = max(0, boundary - filled)
            if cells > 0 {
                bar += color ? segment.code + String(repeating: segment.block, count: cells) : String(repeating: segment.plain, count: cells)
                filled += cells
            }
        }
        let rest = barWidth - filled
        if rest > 0 { bar += color ? "\u{1B}[2m" + String(repeating: "░", count: rest) : String(repeating: ".", count: rest) }
        if color { bar += "\u{1B}[0m" }
        let percent = String(Self.percent(report))
        return "[\(bar)] \(String(repeating: " ", count: max(0, 3 - percent.count)))\(percent)%  \(counts)"
    }

    /// The share of targeted copies routed (not pending), 0 to 100; 100 only once done.
    static func percent(_ report: ReceivedReport) -> Int {
        if report.done { return 100 }
        guard report.targeted > 0 else { return 0 }
        return min(99, max(0, report.targeted - report.pending) * 100 / report.targeted)
    }

    /// `targeted 3  tcp 1  apns 1  failed 0  waiting 1  opened 0`, plus pending, expired,
    /// recalled and replaced when not zero.
    static func counts(_ report: ReceivedReport) -> String {
        var parts = [
            "targeted \(report.targeted)", "tcp \(report.deliveredTCP)", "apns \(report.sentAPNs)",
            "failed \(report.failedAPNs)", "waiting \(report.waiting)", "opened \(report.opened)",
        ]
        for (name, value) in [
            ("fcm", report.sentFCM), ("pending", report.pending), ("expired", report.expired), ("recalled", report.recalled),
            ("replaced", report.replaced),
        ]
        where value > 0 {
            parts.append("\(name) \(value)")
        }
        return parts.joined(separator: "  ")
    }
}
