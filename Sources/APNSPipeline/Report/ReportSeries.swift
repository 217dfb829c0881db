/// The timelines of one campaign's runs (shards side by side, lined up by their start times) merged into evenly
/// spaced buckets: answers and requests per second summed over runs, the answer-weighted mean of p50 and the
/// largest p99 in each bucket, and requests in flight (and the in-flight windows) summed over runs.
///
/// Counts between two samples are spread over the buckets that interval covers, in proportion to the overlap,
/// so samples that fall just either side of a bucket boundary do not make a saw-tooth.
public struct ReportSeries: Sendable, Equatable {
    /// One bucket.
    public struct Point: Sendable, Equatable {
        /// Seconds since the campaign started, at the end of the bucket.
        public var seconds: Double
        /// Final results per second.
        public var answersPerSecond: Double
        /// Requests per second in the bucket.
        public var requestsPerSecond: Double
        /// The median latency in seconds; nil when no answer arrived.
        public var latencyP50: Double?
        /// The 99th-percentile latency in seconds; nil when no answer arrived.
        public var latencyP99: Double?
        /// Requests in flight; nil when not known.
        public var inFlight: Int?
        /// The in-flight window; nil when not known.
        public var window: Int?
    }

    /// One run's own results per second, in the same buckets as `points`; nil before the run started and
    /// after it ended (shards run one after another are not drawn as one line that drops to nothing between them).
    public struct Run: Sendable, Equatable {
        /// The series' name in the chart's legend.
        public var label: String
        /// Answers per second in each bucket; nil where the run had no sample.
        public var answersPerSecond: [Double?]
    }

    /// The points, in time order.
    public private(set) var points: [Point]
    /// Each run apart, in the order of the timelines.
    public private(set) var runs: [Run] = []
    /// The width of each bucket, in seconds.
    public let bucketSeconds: Double
    /// Seconds since the epoch at which the first run started.
    public let startedAt: Double

    /// Nil when there is no sample at all.
    public init?(timelines: [CampaignTimeline], maximumPoints: Int = 120) {
        let used = timelines.filter { !$0.samples.isEmpty }
        let ends = used.compactMap { timeline in timeline.samples.last.map { timeline.startedAt + $0.elapsedSeconds } }
        guard let start = used.map(\.startedAt).min(), let end = ends.max() else { return nil }
        let span = max(end - start, 1)
        let width = max(1, (span / Double(max(1, maximumPoints))).rounded(.up))
        let count = max(1, Int((span / width).rounded(.up)))
        var buckets = [Accumulator](repeating: Accumulator(), count: count)
        var runs: [(label: String, answers: [Double?])] = []
        for (number, timeline) in used.enumerated() {
            var local = [Accumulator](repeating: Accumulator(), count: count)
            var previous = CampaignTimeline.Sample(
                elapsedSeconds: 0, records: 0, answered: 0, delivered: 0, requests: 0, inFlight: 0)
            for sample in timeline.samples {
                let from = timeline.startedAt - start + previous.elapsedSeconds
                let to = timeline.startedAt - start + sample.elapsedSeconds
                let answers = Double(max(0, sample.answered - previous.answered))
                let requests = Double(max(0, sample.requests - previous.requests))
                let first = min(count - 1, max(0, Int(from / width)))
                let last = min(count - 1, max(0, Int((to / width).rounded(.up)) - 1))
                for index in first...max(first, last) {
                    let overlap =
                        to > from
                        ? max(0, min(to, Double(index + 1) * width) - max(from, Double(index) * width)) / (to - from)
                        : 1
                    local[index].answers += answers * overlap
                    local[index].requests += requests * overlap
                    if let p50 = sample.latencyP50 {
                        let weight = max(answers * overlap, 1e-9)
                        local[index].p50Sum += p50 * weight
                        local[index].p50Weight += weight
                    }
                    if let p99 = sample.latencyP99 { local[index].p99 = max(local[index].p99 ?? 0, p99) }
                    local[index].inFlight = max(local[index].inFlight ?? 0, sample.inFlight)
                    if let window = sample.window { local[index].window = max(local[index].window ?? 0, window) }
                }
                previous = sample
            }
            for index in buckets.indices { buckets[index].add(local[index]) }
            let firstBucket = min(count - 1, max(0, Int((timeline.startedAt - start) / width)))
            let lastBucket = min(
                count - 1,
                max(firstBucket, Int(((timeline.startedAt - start + previous.elapsedSeconds) / width).rounded(.up)) - 1)
            )
            runs.append(
                (
                    timeline.label ?? "run \(number + 1)",
                    local.indices.map { (firstBucket...lastBucket).contains($0) ? local[$0].answers : nil }
                ))
        }
        self.startedAt = start
        self.bucketSeconds = width
        let covered = (0..<count).map { index in
            index == count - 1 ? max(span - Double(index) * width, width / 4) : width
        }
        self.runs = runs.map { run in
            Run(
                label: run.label,
                answersPerSecond: run.answers.enumerated().map { index, answers in answers.map { $0 / covered[index] } }
            )
        }
        // The last bucket may be cut short by the end of the campaign: its rate is over the part it covers.
        self.points = buckets.enumerated().map { index, bucket in
            Point(
                seconds: min(Double(index + 1) * width, span), answersPerSecond: bucket.answers / covered[index],
                requestsPerSecond: bucket.requests / covered[index],
                latencyP50: bucket.p50Weight > 0 ? bucket.p50Sum / bucket.p50Weight : nil, latencyP99: bucket.p99,
                inFlight: bucket.inFlight, window: bucket.window)
        }
    }

    /// Whether any run reported an in-flight window.
    public var hasWindow: Bool { points.contains { $0.window != nil } }

    /// What the buckets collect, for one run and then for all.
    private struct Accumulator {
        var answers = 0.0
        var requests = 0.0
        var p50Sum = 0.0
        var p50Weight = 0.0
        var p99: Double?
        var inFlight: Int?
        var window: Int?

        mutating func add(_ run: Accumulator) {
            answers += run.answers
            requests += run.requests
            p50Sum += run.p50Sum
            p50Weight += run.p50Weight
            if let value = run.p99 { p99 = max(p99 ?? 0, value) }
            if let value = run.inFlight { inFlight = (inFlight ?? 0) + value }
            if let value = run.window { window = (window ?? 0) + value }
        }
    }
}
