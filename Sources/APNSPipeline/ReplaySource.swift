import APNSCore

/// The records `replay` sends again: the lines of earlier result files whose outcome is replayable (retryable,
/// not_sent, and in_doubt unless excluded), rebuilt into notifications from the lines alone. Keys keep each
/// record's original input file and line, so the replay's results read like the campaign's.
public final class ReplaySource: DispatchRecordSource {
    /// The original input files the result lines name, in first-seen order: what the keys' file indexes mean.
    public let inputPaths: [String]
    private let resultPaths: [String]
    private let includeInDoubt: Bool
    private var fileIndex: [String: Int] = [:]
    private var current: ResultReader?
    private var nextPath = 0
    /// Replayable lines found so far.
    public private(set) var selected = 0

    /// Scans the result files once to learn the input files they name; throws if one cannot be read.
    public init(resultPaths: [String], includeInDoubt: Bool) throws(PipelineError) {
        self.resultPaths = resultPaths
        self.includeInDoubt = includeInDoubt
        var paths: [String] = []
        var index: [String: Int] = [:]
        for path in resultPaths {
            let reader = try ResultReader(path: path)
            while let record = try reader.next() {
                guard index[record.file] == nil else { continue }
                index[record.file] = paths.count
                paths.append(record.file)
            }
        }
        inputPaths = paths
        fileIndex = index
    }

    public func nextRecord() throws -> DispatchRecord? {
        while true {
            if current == nil {
                guard nextPath < resultPaths.count else { return nil }
                current = try ResultReader(path: resultPaths[nextPath])
                nextPath += 1
            }
            guard let reader = current, let record = try reader.next() else {
                current = nil
                continue
            }
            guard record.outcome.isReplayable, includeInDoubt || record.outcome != .inDoubt else { continue }
            selected += 1
            let key = DispatchKey(fileIndex: fileIndex[record.file] ?? 0, line: record.line)
            do {
                return DispatchRecord(key: key, content: .notification(try record.replayNotification()))
            } catch {
                return DispatchRecord(key: key, content: .invalid(error, tokenText: record.token, topicText: record.topic))
            }
        }
    }
}
