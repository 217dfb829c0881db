/// What a refusal for another campaign on the same result file proposes: when the inputs of a finished `send`
/// changed (the records fixed after an exit 2, as the exit table advises), the command that sends only the records the earlier
/// result file does not answer for yet (`--skip-delivered`, docs/RUNNING-AGAIN.md), before `--overwrite`, which
/// sends every record again.
extension RunStart {
    /// The refusal's last sentences: the way to go on, the safe one first.
    static func refusalAdvice(
        identity: CampaignIdentity, manifest: CampaignManifest, resultsPath: String, facts: Facts
    ) -> String {
        let overwrite =
            "add --overwrite to replace it (--overwrite sends every record again, also those delivered before)"
        // Only a finished campaign: an unfinished one's records in flight have no line yet, and would go again.
        guard identity.command == "send", manifest.identity.command == "send", manifest.state == .finished,
            identity.inputsDiffer(from: manifest.identity),
            let free = facts.freeResultsPath,
            let command = fixedRecordsCommand(manifest: manifest, resultsPath: resultsPath, newResults: free)
        else { return "Name another --results file, or \(overwrite)" }
        // The command last, so it can be copied from the end of the line.
        return "If you fixed records in the input, send only those \(resultsPath) has no delivered, in-doubt or prune "
            + "line for (otherwise name another --results file, or \(overwrite)): \(command)"
    }

    /// The earlier campaign's command with `--results` naming `newResults` and `--skip-delivered resultsPath`
    /// added (`--resume` and `--overwrite` left out); nil when its arguments name no result file.
    static func fixedRecordsCommand(manifest: CampaignManifest, resultsPath: String, newResults: String) -> String? {
        var words: [String] = []
        var namedResults = false
        var index = manifest.arguments.startIndex
        while index < manifest.arguments.endIndex {
            let word = manifest.arguments[index]
            index += 1
            switch word {
            case "--resume", "--overwrite":
                continue
            case "--results":
                guard index < manifest.arguments.endIndex else { return nil }
                index += 1
                words += ["--results", newResults]
                namedResults = true
            case _ where word.hasPrefix("--results="):
                words.append("--results=" + newResults)
                namedResults = true
            default:
                words.append(word)
            }
        }
        guard namedResults else { return nil }
        words += ["--skip-delivered", resultsPath]
        return (["apns-bulk"] + words).map(ShellWord.quoted).joined(separator: " ")
    }

    /// A result path beside `resultsPath` that `taken` says nothing stands at: `results-2.ndjson`,
    /// `results-3.ndjson`, … (a `-N` the name already ends with is counted on from). Nil after 1000 tries.
    public static func freeResultsPath(besides resultsPath: String, taken: (String) -> Bool) -> String? {
        guard resultsPath != "-" else { return nil }
        let slash = resultsPath.lastIndex(of: "/").map { resultsPath.index(after: $0) } ?? resultsPath.startIndex
        let folder = resultsPath[..<slash]
        let name = resultsPath[slash...]
        let dot = name.firstIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 } ?? name.endIndex
        var stem = name[..<dot]
        let suffix = name[dot...]
        var next = 2
        if let dash = stem.lastIndex(of: "-"), let number = Int(stem[stem.index(after: dash)...]), number >= 2,
            number < 1_000_000
        {
            stem = stem[..<dash]
            next = number + 1
        }
        for number in next..<(next + 1000) {
            let candidate = String(folder) + String(stem) + "-\(number)" + String(suffix)
            if !taken(candidate) { return candidate }
        }
        return nil
    }
}

extension CampaignIdentity {
    /// Whether the inputs differ (in number, or one's content) from an earlier run's.
    func inputsDiffer(from earlier: CampaignIdentity) -> Bool {
        inputs.count != earlier.inputs.count || zip(inputs, earlier.inputs).contains { !$0.isSameContent(as: $1) }
    }
}
