import APNSCore

/// The records `replay` sends again: the lines of earlier result files whose outcome is replayable (retryable,
/// not_sent, and in_doubt unless excluded), rebuilt into notifications from the lines alone. Keys keep each
/// record's original input file and line, so the replay's results read like the campaign's. Given a campaign's
/// result file and its replays, only the line of each record that stands (`ResultChain`) counts: a record a later
/// replay delivered is not sent again.
///
/// A damaged line (one that cannot be read, or that holds a value no request may carry) is never sent and never
/// stops the replay: it becomes an invalid record, reported as one `input_error` result line whose detail names
/// the result file and line. It keeps its original file and line when those are readable (and is skipped, like
/// any line, when its outcome is readable and not replayable); otherwise it is keyed by the result file itself.
///
/// Overrides fix what stopped a campaign (`replay --topic`, `--push-type`): every notification sent goes with the
/// override, and the requests APNs rejected for that very setting (`input_error` lines with an APNs reason the
/// override answers, `Overrides.fixedReasons`) are sent again too.
public final class ReplayReader: RecordReader {
    /// Campaign-wide settings that replace each replayed record's own.
    public struct Overrides: Sendable, Equatable {
        /// The topic to send instead of each record's own; nil keeps it.
        public var topic: Topic?
        /// The push type to send instead of each record's own; nil keeps it.
        public var pushType: PushType?

        /// Fixes for a replay; none by default.
        public init(topic: Topic? = nil, pushType: PushType? = nil) {
            self.topic = topic
            self.pushType = pushType
        }

        /// The APNs reasons of rejections these overrides fix: a wrong topic, a wrong push type.
        public var fixedReasons: Set<String> {
            var reasons: Set<String> = []
            if topic != nil { reasons.formUnion(APNSReason.wrongTopicReasons) }
            if pushType != nil { reasons.formUnion(APNSReason.wrongPushTypeReasons) }
            return reasons
        }

        /// The notification with these settings in place of its own.
        func applied(to notification: PushNotification) -> PushNotification {
            guard topic != nil || pushType != nil else { return notification }
            return PushNotification(
                token: notification.token, topic: topic ?? notification.topic,
                pushType: pushType ?? notification.pushType, priority: notification.priority,
                expiration: notification.expiration, collapseID: notification.collapseID,
                apnsID: notification.apnsID, payload: notification.payload)
        }
    }

    /// The original input files the result lines name, in first-seen order: what the keys' file indexes mean. A
    /// result file with lines too damaged to name their input file is listed too.
    public let inputFiles: InputFileList
    private let resultPaths: [String]
    private let includeInDoubt: Bool
    /// Whether `expired` lines are replayed too (a replay given a new `--not-after`).
    private let includeExpired: Bool
    private let overrides: Overrides
    private let fixedReasons: Set<String>
    /// Which line of each record stands among the result files.
    private let chain: ResultChain
    private var current: ResultReader?
    private var nextPath = 0
    /// Replayable lines found so far, damaged ones included.
    public private(set) var selected = 0

    /// Scans the result files once to learn the input files they name; throws if one cannot be read.
    public init(
        resultPaths: [String], includeInDoubt: Bool, includeExpired: Bool = false, overrides: Overrides = Overrides()
    ) throws(PipelineError) {
        self.resultPaths = resultPaths
        self.includeInDoubt = includeInDoubt
        self.includeExpired = includeExpired
        self.overrides = overrides
        self.fixedReasons = overrides.fixedReasons
        var files = InputFileList()
        chain = try ResultChain.read(resultPaths: resultPaths, inputFiles: &files)
        for path in resultPaths {
            let reader = try ResultReader(path: path, inputFiles: files)
            while let line = try reader.nextLine() {
                // A line too damaged to name its input file is keyed by the result file itself.
                if case .failure(let damaged) = line, damaged.record == nil {
                    _ = reader.inputFiles.index(adding: path)
                }
            }
            files = reader.inputFiles
        }
        inputFiles = files
    }

    /// The input paths, by file index, as the result lines print them.
    public var inputPaths: [String] { inputFiles.paths }

    /// The next record to send again; nil at the end.
    public func nextRecord() throws -> CampaignRecord? {
        while true {
            if current == nil {
                guard nextPath < resultPaths.count else { return nil }
                current = try ResultReader(path: resultPaths[nextPath], inputFiles: inputFiles)
                nextPath += 1
            }
            guard let reader = current, let line = try reader.nextLine() else {
                current = nil
                continue
            }
            switch line {
            case .success(let record):
                guard isReplayed(record), chain.stands(record.key, file: nextPath - 1) else { continue }
                selected += 1
                do {
                    let notification = overrides.applied(to: try record.replayNotification())
                    try notification.validate()
                    return CampaignRecord(key: record.key, content: .notification(notification), kept: record.kept)
                } catch {
                    let located = InputError(error.code, "\(reader.name):\(reader.lineNumber): \(error.detail)")
                    return CampaignRecord(
                        key: record.key, content: .invalid(located, tokenText: record.token, topicText: record.topic),
                        kept: record.kept)
                }
            case .failure(let damaged):
                if let record = damaged.record, !isReplayed(record) || !chain.stands(record.key, file: nextPath - 1) {
                    continue
                }
                selected += 1
                let key =
                    damaged.record?.key
                    ?? RecordKey(fileIndex: inputFiles.index(of: reader.name) ?? 0, line: damaged.lineNumber)
                return CampaignRecord(
                    key: key,
                    content: .invalid(
                        damaged.error, tokenText: damaged.record?.token, topicText: damaged.record?.topic
                    ), kept: damaged.record?.kept)
            }
        }
    }

    private func isReplayed(_ record: ResultRecord) -> Bool {
        let outcome = record.outcome
        if outcome == .inputError, record.status != nil, let reason = record.reason {
            return fixedReasons.contains(reason)
        }
        if outcome == .expired { return includeExpired }
        return outcome.isReplayable && (includeInDoubt || outcome != .inDoubt)
    }
}
