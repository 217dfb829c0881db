extension ResultChain {
    /// The chain of the result files at `paths` (in that order), from their campaign records, with every line of
    /// its chained files offered: ready for `stands`. The records' keys index `inputFiles`, which gains the input
    /// paths the lines name: read the files again with the list it returns, so the keys agree.
    public static func read(resultPaths paths: [String], inputFiles: inout InputFileList) throws(PipelineError)
        -> ResultChain
    {
        var files = paths.map { path in
            let manifest = try? CampaignManifest.read(forResults: path)
            return File(path: path, identity: manifest?.identity, startedAt: manifest?.startedAt)
        }
        // A replay that names its inputs by other paths than these (another folder, absolute against relative)
        // is matched to them by content.
        let given = Set(paths)
        let namedOtherwise = files.contains { file in
            file.identity?.command == "replay" && file.identity?.inputs.contains { !given.contains($0.path) } == true
        }
        if namedOtherwise {
            for index in files.indices {
                files[index].fingerprint = try? ContentFingerprint.hex(ofFileAtPath: paths[index])
            }
        }
        var chain = ResultChain(files: files)
        for file in chain.readingOrder {
            let reader = try ResultReader(path: paths[file], inputFiles: inputFiles)
            while let line = try reader.nextLine() {
                switch line {
                case .success(let record): chain.offer(record.key, outcome: record.outcome, file: file)
                case .failure(let damaged):
                    if let record = damaged.record { chain.offer(record.key, outcome: record.outcome, file: file) }
                }
            }
            inputFiles = reader.inputFiles
        }
        return chain
    }

    /// Reads the result files at `paths` as one set and hands `line` each line that stands (its record and the
    /// index of its file in `paths`), file by file in the order given. Returns the chain and the torn last lines
    /// skipped, as `file:line`. A damaged line is an error, as `ResultReader.next()` makes it.
    @discardableResult
    public static func forEachStandingLine(
        resultPaths paths: [String], _ line: (ResultRecord, Int) -> Void
    ) throws(PipelineError) -> (chain: ResultChain, tornLines: [String]) {
        try forEachStandingLine(resultPaths: paths) { record, file, _ in line(record, file) }
    }

    /// The same, with the input files the records' keys index (for the path a line names as its `file`).
    @discardableResult
    public static func forEachStandingLine(
        resultPaths paths: [String], _ line: (ResultRecord, Int, InputFileList) -> Void
    ) throws(PipelineError) -> (chain: ResultChain, tornLines: [String]) {
        var inputFiles = InputFileList()
        let chain = try read(resultPaths: paths, inputFiles: &inputFiles)
        var tornLines: [String] = []
        for (file, path) in paths.enumerated() {
            let reader = try ResultReader(path: path, inputFiles: inputFiles)
            while let record = try reader.next() {
                if chain.stands(record.key, file: file) { line(record, file, reader.inputFiles) }
            }
            inputFiles = reader.inputFiles
            if let torn = reader.tornLine { tornLines.append("\(path):\(torn)") }
        }
        return (chain, tornLines)
    }
}
