import Foundation

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
            samples.append(Sample(
                elapsedSeconds: elapsed, records: Self.int(row["records"]), answered: Self.int(row["answered"]),
                delivered: Self.int(row["delivered"]), requests: Self.int(row["requests"]),
                latencyP50: Self.double(row["latency_p50_seconds"]), latencyP99: Self.double(row["latency_p99_seconds"]),
                inFlight: Self.int(row["in_flight"]), window: row["window"].flatMap { Self.double($0) }.map { Int($0) }))
        }
        self.init(startedAt: started, samples: samples)
        label = object["label"] as? String
    }

    /// A summary JSON document (`CampaignSummary.json`) with this timeline added under `summaryKey`.
    public func inserted(intoSummaryJSON bytes: [UInt8]) -> [UInt8] {
        guard var object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] else { return bytes }
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
