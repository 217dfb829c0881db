import Foundation

extension CampaignReport {
    /// Adds every line of a result file (NDJSON or CSV, plain or gzip).
    public mutating func addResults(atPath path: String) throws(PipelineError) {
        addResultFile(path)
        if let manifest = try? CampaignManifest.read(forResults: path) { runs[path, default: RunFacts()].take(manifest) }
        let reader = try ResultReader(path: path)
        while let record = try reader.next() { add(record, resultFile: path) }
        if let torn = reader.tornLine { tornLines.append("\(path):\(torn)") }
        if let run = UnfinishedRun.find(resultsPath: path) { unfinished.append(run) }
    }

    /// Adds the timeline of a `send --summary` file; a summary without one (an older version) is counted only.
    public mutating func addSummary(atPath path: String) throws(PipelineError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw PipelineError(.openFailed, "\(path): \(error.localizedDescription)")
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw PipelineError(.inputsInvalid, "\(path): not a summary JSON file: \(error.localizedDescription)")
        }
        guard let summary = object as? [String: Any] else {
            throw PipelineError(.inputsInvalid, "\(path): not a summary JSON file (no object at the top)")
        }
        countSummary()
        if let value = summary[CampaignTimeline.summaryKey], var timeline = CampaignTimeline(jsonObject: value) {
            if timeline.label == nil { timeline.label = (path as NSString).lastPathComponent }
            add(timeline)
        }
    }
}
