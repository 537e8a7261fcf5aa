import Foundation
import HeraldStore

/// The dashboard's figures over the last hour, from the nodes' samples: a line per node
/// (or per outcome), drawn as SVG by the template (points in a 600 × 160 box, newest at
/// the right). Counters become rates between a node's consecutive samples; a counter that
/// went down means the node restarted, so its new value counts from zero.
struct ConsoleChart {
    struct Line {
        var name: String
        /// `x,y x,y …` for a polyline.
        var points: String
        var last: Double
    }

    static let width = 600.0
    static let height = 160.0
    static let span: TimeInterval = 3600

    var title: String
    var unit: String
    var lines: [Line]
    var maximum: Double

    /// One chart of `figure` per node: a gauge as it is, a counter as a rate per second.
    init(title: String, unit: String, samples: [NodeSample], now: Date, rate: Bool, _ figure: (NodeSample) -> Int64) {
        var values: [String: [(Date, Double)]] = [:]
        for (node, own) in Dictionary(grouping: samples, by: \.nodeID) {
            let sorted = own.sorted { $0.at < $1.at }
            if rate {
                values[node] = zip(sorted, sorted.dropFirst()).compactMap { earlier, later in
                    let seconds = later.at.timeIntervalSince(earlier.at)
                    guard seconds > 0 else { return nil }
                    let delta = figure(later) >= figure(earlier) ? figure(later) - figure(earlier) : figure(later)
                    return (later.at, Double(delta) / seconds)
                }
            } else {
                values[node] = sorted.map { ($0.at, Double(figure($0))) }
            }
        }
        self.init(title: title, unit: unit, values: values, now: now)
    }

    init(title: String, unit: String, values: [String: [(Date, Double)]], now: Date) {
        self.title = title
        self.unit = unit
        let maximum = max(1, values.values.flatMap { $0.map(\.1) }.max() ?? 1)
        self.maximum = maximum
        lines = values.keys.sorted().map { name in
            let points = values[name]!.map { at, value in
                let x = max(0, Self.width - now.timeIntervalSince(at) / Self.span * Self.width)
                let y = Self.height - value / maximum * (Self.height - 8)
                return String(format: "%.1f,%.1f", x, y)
            }
            return Line(name: name, points: points.joined(separator: " "), last: values[name]!.last?.1 ?? 0)
        }
    }

    /// What the template reads.
    var context: [String: Any] {
        [
            "title": title, "unit": unit, "maximum": Self.format(maximum),
            "lines": lines.enumerated().map { index, line in
                ["name": line.name, "points": line.points, "last": Self.format(line.last), "series": "s\(index % 6)"]
            },
            "empty": lines.allSatisfy { $0.points.isEmpty },
        ]
    }

    static func format(_ value: Double) -> String {
        value >= 100 || value == value.rounded() ? String(Int(value.rounded())) : String(format: "%.1f", value)
    }
}
