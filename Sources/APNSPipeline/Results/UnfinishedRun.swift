import APNSCore

/// A result file whose run has not finished: its campaign record says so, or (for a file without one) its journal
/// is still there. `report` and `prune` name it, say how many records were answered so far, and print the command
/// that finishes it, so a killed run is never read as a complete campaign.
public struct UnfinishedRun: Sendable, Equatable {
    /// The unfinished run's result file.
    public var resultsPath: String
    /// Final result lines written so far.
    public var answered: Int
    /// The command that finishes it (the run's own, from the campaign record); nil for a result file without one.
    public var command: String?

    /// The unfinished run behind `resultsPath`, or nil when its run finished (or nothing says otherwise).
    public static func find(resultsPath: String) -> UnfinishedRun? {
        let manifest = try? CampaignManifest.read(forResults: resultsPath)
        if let manifest {
            guard manifest.state == .unfinished else { return nil }
        } else {
            guard POSIXFile.exists(SendJournal.path(forResults: resultsPath)) else { return nil }
        }
        return UnfinishedRun(resultsPath: resultsPath, answered: countLines(resultsPath), command: manifest?.command)
    }

    /// One line for stderr, ending with the command that finishes the run.
    public var message: String {
        let finish = command ?? "the same send (or replay) command with --resume"
        return
            "\(PrintableText.escaping(resultsPath)) is unfinished: \(CountedNoun.text(answered, "record")) answered so far "
            + "(its run is still going, or was stopped before it finished); finish it with: \(finish)"
    }

    /// Final lines in a result file: its line ends.
    private static func countLines(_ path: String) -> Int {
        guard let file = try? POSIXFile.openForReading(path) else { return 0 }
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        var lines = 0
        while let count = try? file.read(into: &buffer, at: 0, count: buffer.count), count > 0 {
            var start = 0
            while let end = ByteSearch.firstIndex(of: UInt8(ascii: "\n"), in: buffer, range: start..<count) {
                lines += 1
                start = end + 1
            }
        }
        return lines
    }
}
