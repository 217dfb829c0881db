import Foundation

/// One line chart as inline SVG (no script, no external font or image): axes from zero, a few round grid
/// values, one polyline per series, broken where a series has no value. Seconds on the x axis.
struct SVGLineChart {
    /// One line.
    struct Series {
        var name: String
        /// A CSS colour, written as an attribute so that printing keeps it.
        var color: String
        var points: [(x: Double, y: Double?)]
        var dashed = false
    }

    var title: String
    /// How y values are written on the axis (`{ "\($0) ms" }`).
    var formatY: (Double) -> String
    var series: [Series]
    var width = 720.0
    var height = 220.0

    private let left = 64.0
    private let right = 16.0
    private let top = 12.0
    private let bottom = 30.0

    func svg() -> String {
        let xs = series.flatMap { $0.points.map(\.x) }
        let ys = series.flatMap { $0.points.compactMap(\.y) }
        let maximumX = max(xs.max() ?? 1, 1)
        let yTicks = Self.ticks(upTo: ys.max() ?? 0)
        let maximumY = yTicks.last ?? 1
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        func px(_ x: Double) -> Double { left + x / maximumX * plotWidth }
        func py(_ y: Double) -> Double { top + plotHeight - y / maximumY * plotHeight }

        var out = "<svg viewBox=\"0 0 \(Int(width)) \(Int(height))\" "
        out += "width=\"100%\" role=\"img\" aria-label=\"\(HTMLText.escaped(title))\">"
        out += "<title>\(HTMLText.escaped(title))</title>"
        for tick in yTicks {
            let y = Self.fixed(py(tick))
            out +=
                "<line x1=\"\(Self.fixed(left))\" x2=\"\(Self.fixed(width - right))\" y1=\"\(y)\" y2=\"\(y)\" stroke=\"#ddd\" stroke-width=\"1\"/>"
            out +=
                "<text x=\"\(Self.fixed(left - 6))\" y=\"\(y)\" dy=\"4\" text-anchor=\"end\" font-size=\"11\" fill=\"#555\">\(HTMLText.escaped(formatY(tick)))</text>"
        }
        for tick in Self.ticks(upTo: maximumX, count: 6) where tick <= maximumX {
            let x = Self.fixed(px(tick))
            out +=
                "<line x1=\"\(x)\" x2=\"\(x)\" y1=\"\(Self.fixed(top + plotHeight))\" y2=\"\(Self.fixed(top + plotHeight + 4))\" stroke=\"#888\"/>"
            out +=
                "<text x=\"\(x)\" y=\"\(Self.fixed(height - 8))\" text-anchor=\"middle\" font-size=\"11\" fill=\"#555\">\(HTMLText.escaped(Self.duration(tick)))</text>"
        }
        out +=
            "<line x1=\"\(Self.fixed(left))\" x2=\"\(Self.fixed(left))\" y1=\"\(Self.fixed(top))\" y2=\"\(Self.fixed(top + plotHeight))\" stroke=\"#888\"/>"
        out +=
            "<line x1=\"\(Self.fixed(left))\" x2=\"\(Self.fixed(width - right))\" y1=\"\(Self.fixed(top + plotHeight))\" y2=\"\(Self.fixed(top + plotHeight))\" stroke=\"#888\"/>"
        for line in series {
            for run in Self.runs(line.points) {
                let coordinates = run.map { "\(Self.fixed(px($0.x))),\(Self.fixed(py($0.y)))" }.joined(separator: " ")
                if run.count == 1, let only = run.first {
                    out +=
                        "<circle cx=\"\(Self.fixed(px(only.x)))\" cy=\"\(Self.fixed(py(only.y)))\" r=\"2.5\" fill=\"\(line.color)\"/>"
                } else {
                    out +=
                        "<polyline fill=\"none\" stroke=\"\(line.color)\" stroke-width=\"2\" stroke-linejoin=\"round\""
                    out += line.dashed ? " stroke-dasharray=\"6 4\"" : ""
                    out += " points=\"\(coordinates)\"/>"
                }
            }
        }
        out += "</svg>"
        return out
    }

    /// The stretches of a series without a missing value.
    static func runs(_ points: [(x: Double, y: Double?)]) -> [[(x: Double, y: Double)]] {
        var runs: [[(x: Double, y: Double)]] = []
        var current: [(x: Double, y: Double)] = []
        for point in points {
            if let y = point.y {
                current.append((point.x, y))
            } else if !current.isEmpty {
                runs.append(current)
                current = []
            }
        }
        if !current.isEmpty { runs.append(current) }
        return runs
    }

    /// Round values from 0 to at least `maximum` (1, 2, 2.5 or 5 times a power of ten apart).
    static func ticks(upTo maximum: Double, count: Int = 4) -> [Double] {
        guard maximum > 0, maximum.isFinite else { return [0, 1] }
        let rough = maximum / Double(count)
        let magnitude = pow(10, floor(log10(rough)))
        let step = [1.0, 2, 2.5, 5, 10].map { $0 * magnitude }.first { $0 >= rough } ?? 10 * magnitude
        let steps = Int((maximum / step).rounded(.up))
        return (0...max(1, steps)).map { Double($0) * step }
    }

    /// `0s`, `45s`, `2m`, `2m30s`, `1h`, `1h30m`.
    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        if total < 60 { return "\(total)s" }
        if total < 3600 { return total % 60 == 0 ? "\(total / 60)m" : "\(total / 60)m\(total % 60)s" }
        return total % 3600 / 60 == 0 ? "\(total / 3600)h" : "\(total / 3600)h\(total % 3600 / 60)m"
    }

    static func fixed(_ value: Double) -> String { String(format: "%.1f", value) }
}
