import Foundation

/// A run's course over time, sampled at each progress report: cumulative counts, requests in flight (and the
/// in-flight window, where there is one), and the latency percentiles of the answers received since the sample
/// before. `send --summary` writes it under `"timeline"`; `report` draws throughput, latency and in-flight
/// charts from it.
///
/// Memory stays bounded: past `maximumSamples`, neighbouring samples are merged in pairs (the later counts, the
/// larger p99, the answer-weighted mean p50), so a long run keeps about as many samples as a short one.
public struct CampaignTimeline: Sendable {
    /// The run at one moment.
    public struct Sample: Sendable, Equatable {
        /// Seconds since the run started.
        public var elapsedSeconds: Double
        /// Records read so far.
        public var records: Int
        /// Records with their final result so far.
        public var answered: Int
        /// Records delivered by the sample's time.
        public var delivered: Int
        /// Requests sent so far, retries included.
        public var requests: Int
        /// Latency percentiles (seconds) of the answers since the sample before; nil when there were none.
        public var latencyP50: Double?
        /// The 99th-percentile latency in seconds; nil when no answer arrived.
        public var latencyP99: Double?
        /// Requests in flight at the sample's time.
        public var inFlight: Int
        /// The in-flight window at the sample's time; nil when not known.
        public var window: Int?

        /// A sample from its figures.
        public init(
            elapsedSeconds: Double, records: Int, answered: Int, delivered: Int, requests: Int,
            latencyP50: Double? = nil, latencyP99: Double? = nil, inFlight: Int, window: Int? = nil
        ) {
            self.elapsedSeconds = elapsedSeconds
            self.records = records
            self.answered = answered
            self.delivered = delivered
            self.requests = requests
            self.latencyP50 = latencyP50
            self.latencyP99 = latencyP99
            self.inFlight = inFlight
            self.window = window
        }
    }

    /// Seconds since the epoch at which the run started: lines up the timelines of shards run side by side.
    public var startedAt: Double
    /// What the report calls this run beside others (its shard, or its result file); nil when not named.
    public var label: String?
    /// The samples, oldest first.
    public private(set) var samples: [Sample] = []
    /// The most samples kept.
    public let maximumSamples: Int

    private var latenciesAtLastSample = LatencyHistogram()

    /// An empty timeline of a run started at `startedAt` seconds since the epoch.
    public init(startedAt: Double, maximumSamples: Int = 1000) {
        self.startedAt = startedAt
        self.maximumSamples = max(2, maximumSamples)
    }

    /// A timeline read back from a file.
    public init(startedAt: Double, samples: [Sample]) {
        self.startedAt = startedAt
        self.samples = samples.sorted { $0.elapsedSeconds < $1.elapsedSeconds }
        self.maximumSamples = max(2, samples.count)
    }

    /// Takes a sample of the run as a progress report shows it.
    public mutating func record(_ summary: CampaignSummary, inFlight: Int, window: Int? = nil) {
        let interval = summary.latencies.subtracting(latenciesAtLastSample)
        latenciesAtLastSample = summary.latencies
        let sample = Sample(
            elapsedSeconds: summary.elapsedSeconds, records: summary.records,
            answered: summary.outcomes.values.reduce(0, +), delivered: summary.count(.delivered),
            requests: summary.requests,
            latencyP50: interval.count > 0 ? interval.percentile(0.5) : nil,
            latencyP99: interval.count > 0 ? interval.percentile(0.99) : nil,
            inFlight: inFlight, window: window)
        append(sample, answersInInterval: interval.count)
    }

    /// Appends a sample; one at the same moment as the last replaces it.
    mutating func append(_ sample: Sample, answersInInterval: Int) {
        if let last = samples.last, last.elapsedSeconds >= sample.elapsedSeconds {
            samples[samples.count - 1] = Self.merged(
                last, sample, earlierWeight: 1, laterWeight: max(1, answersInInterval))
        } else {
            samples.append(sample)
        }
        if samples.count > maximumSamples { thin() }
    }

    /// Merges neighbouring samples in pairs.
    private mutating func thin() {
        var merged: [Sample] = []
        merged.reserveCapacity(samples.count / 2 + 1)
        var index = 0
        var previousAnswered = 0
        while index < samples.count {
            if index + 1 < samples.count {
                let first = samples[index]
                let second = samples[index + 1]
                merged.append(
                    Self.merged(
                        first, second, earlierWeight: max(1, first.answered - previousAnswered),
                        laterWeight: max(1, second.answered - first.answered)))
                previousAnswered = second.answered
            } else {
                merged.append(samples[index])
            }
            index += 2
        }
        samples = merged
    }

    /// The later sample's counts over both intervals: the larger p99, the weighted mean p50.
    static func merged(_ earlier: Sample, _ later: Sample, earlierWeight: Int, laterWeight: Int) -> Sample {
        var sample = later
        sample.latencyP99 = [earlier.latencyP99, later.latencyP99].compactMap { $0 }.max()
        switch (earlier.latencyP50, later.latencyP50) {
        case (let a?, let b?):
            sample.latencyP50 =
                (a * Double(earlierWeight) + b * Double(laterWeight)) / Double(earlierWeight + laterWeight)
        case (let a?, nil): sample.latencyP50 = a
        default: break
        }
        return sample
    }
}

// MARK: - JSON

extension CampaignTimeline {
    /// The key under which `send --summary` files carry the timeline.
    public static let summaryKey = "timeline"

    /// The timeline as a JSON value: `{"started_at": …, "label": …, "samples": [{"elapsed_seconds": …, …}, …]}`.
    public var jsonObject: [String: Any] {
        let rows: [[String: Any]] = samples.map { sample in
            var row: [String: Any] = [
                "elapsed_seconds": sample.elapsedSeconds, "records": sample.records, "answered": sample.answered,
                "delivered": sample.delivered, "requests": sample.requests, "in_flight": sample.inFlight,
            ]
            if let p50 = sample.latencyP50 { row["latency_p50_seconds"] = p50 }
            if let p99 = sample.latencyP99 { row["latency_p99_seconds"] = p99 }
            if let window = sample.window { row["window"] = window }
            return row
        }
        var object: [String: Any] = ["started_at": startedAt, "samples": rows]
        if let label { object["label"] = label }
        return object
    }

    /// Reads the value `jsonObject` wrote; nil when it is not one.
    public init?(jsonObject: Any) {
        guard let object = jsonObject as? [String: Any], let started = Self.double(object["started_at"]),
            let rows = object["samples"] as? [[String: Any]]
        else { return nil }
        var samples: [Sample] = []
        for row in rows {
            guard let elapsed = Self.double(row["elapsed_seconds"]) else { continue }
            samples.append(
                Sample(
                    elapsedSeconds: elapsed, records: Self.int(row["records"]), answered: Self.int(row["answered"]),
                    delivered: Self.int(row["delivered"]), requests: Self.int(row["requests"]),
                    latencyP50: Self.double(row["latency_p50_seconds"]),
                    latencyP99: Self.double(row["latency_p99_seconds"]),
                    inFlight: Self.int(row["in_flight"]),
                    window: row["window"].flatMap { Self.double($0) }.map { Int($0) }))
        }
        self.init(startedAt: started, samples: samples)
        label = object["label"] as? String
    }

    /// A summary JSON document (`CampaignSummary.json`) with this timeline added under `summaryKey`.
    public func inserted(intoSummaryJSON bytes: [UInt8]) -> [UInt8] {
        guard var object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] else {
            return bytes
        }
        object[Self.summaryKey] = jsonObject
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        else { return bytes }
        return Array(data) + [0x0A]
    }

    static func double(_ value: Any?) -> Double? {
        (value as? NSNumber)?.doubleValue
    }

    static func int(_ value: Any?) -> Int {
        (value as? NSNumber)?.intValue ?? 0
    }
}
