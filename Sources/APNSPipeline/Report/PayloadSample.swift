import APNSCore
import Foundation

/// One notification the campaign sent, shown on the report's "What was sent" section: its topic, its payload bytes,
/// and where the report found it. Delivered result lines do not carry their payload (docs/FILES.md, "Result
/// files"), so a sample comes from the campaign's NDJSON input, at a line whose record Apple accepted, or else from
/// a result line that carries its notification (retryable, in doubt, not sent, expired, rejected).
public struct PayloadSample: Sendable, Equatable {
    /// The topic the payload was sent to; nil when not known.
    public var topic: String?
    /// The payload as sent (from a result line) or as the input file has it.
    public var payload: [UInt8]
    /// The outcome of the record it was taken from.
    public var outcome: RecordOutcome
    /// Where it was read: `campaign.ndjson, line 1`, or `results.ndjson (a record not accepted)`.
    public var source: String

    /// How many samples the report shows.
    public static let maximum = 3
    /// Delivered line numbers remembered per result file, to find their records in the input.
    static let deliveredLinesKept = 64
    /// How much of an input file is read looking for those records.
    static let inputBytesRead = 1 << 20

    /// The alert's title and body, when the payload's `aps.alert` has them (a string alert is its body).
    public var alert: (title: String?, body: String?) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any],
            let aps = object["aps"] as? [String: Any], let alert = aps["alert"]
        else { return (nil, nil) }
        if let body = alert as? String { return (nil, body) }
        guard let alert = alert as? [String: Any] else { return (nil, nil) }
        return (alert["title"] as? String, alert["body"] as? String)
    }

    /// The payload as indented JSON for reading; as written when it is not a JSON object.
    public var readableJSON: String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload)),
            let data = try? JSONSerialization.data(
                withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]),
            let text = String(data: data, encoding: .utf8)
        else { return String(decoding: payload, as: UTF8.self) }
        return text
    }

    /// Appends `sample` unless `samples` holds as many as are shown, or this payload for this topic already.
    static func add(_ sample: PayloadSample, to samples: inout [PayloadSample]) {
        guard samples.count < maximum,
            !samples.contains(where: { $0.topic == sample.topic && $0.payload == sample.payload })
        else { return }
        samples.append(sample)
    }

    /// A JSON object payload with its keys sorted, so the same payload from an input line and a result line is
    /// one sample; anything else as it is.
    static func normalized(_ payload: [UInt8]) -> [UInt8] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any],
            let data = try? JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return payload }
        return Array(data)
    }

    /// Samples from the first `inputBytesRead` bytes of a plain NDJSON input: the records at `lines` (delivered
    /// lines of a result file, with their topics) whose line is a JSON object with a `payload` object. A missing,
    /// compressed or CSV input, or records made from a template (`vars`), give none.
    static func fromInput(path: String, lines: [(line: Int, topic: String?)]) -> [PayloadSample] {
        guard !lines.isEmpty, !path.lowercased().hasSuffix(".csv"), !path.lowercased().hasSuffix(".tsv"),
            let handle = FileHandle(forReadingAtPath: path)
        else { return [] }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: inputBytesRead), !data.starts(with: [0x1F, 0x8B]) else {
            return []
        }
        let wanted = Dictionary(lines.map { ($0.line, $0.topic) }, uniquingKeysWith: { first, _ in first })
        var samples: [PayloadSample] = []
        let name = (path as NSString).lastPathComponent
        for (index, line) in data.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            guard samples.count < maximum else { break }
            guard let topic = wanted[index + 1],
                let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                let payload = object["payload"] as? [String: Any],
                let bytes = try? JSONSerialization.data(
                    withJSONObject: payload, options: [.sortedKeys, .withoutEscapingSlashes])
            else { continue }
            add(
                PayloadSample(
                    topic: topic, payload: Array(bytes), outcome: .delivered, source: "\(name), line \(index + 1)"),
                to: &samples)
        }
        return samples
    }
}
