import APNSCore

/// Checks that a run continuing an unfinished campaign read from a stream (standard input, a FIFO, `<(…)`: no
/// fingerprint ahead of time) reads the same stream again: each record read again that the earlier runs answered
/// for is held to what they wrote about it. A record with a result line must have that line's token and topic
/// (for an invalid record: as written, or none); a record the journal says was sent must digest to the
/// `SentDigest` journaled with it (lines of older journals carry none: not checked). The first mismatch throws
/// `campaignChanged`, naming the line and what differs.
///
/// A reader in front of the campaign's: `prepareToStart` reads ahead, before any file of the run is opened, every
/// record up to and including the first one the earlier runs never answered for (at most `readAheadLimit`), so a
/// changed stream is refused before the first request, with nothing written; `nextRecord` hands those out first
/// and checks every later one as it comes. Memory: two dictionaries, of the order of 50 to 100 bytes a
/// result line of a stream and a journaled send.
public final class ContinuedStream: RecordReader {
    private let inner: any RecordReader
    private let expected: Expectations
    private let isAnswered: (RecordKey) -> Bool
    /// The records read ahead, the next one last.
    private var readAhead: [CampaignRecord] = []
    /// Records read ahead at most: what the first request waits for (records of a few hundred bytes each).
    static let readAheadLimit = 100_000

    /// - Parameters:
    ///   - inputs: the run's inputs, in order (those that are streams are checked).
    ///   - isAnswered: whether the earlier runs finished a record (`ResumeState`), so the read-ahead goes on past
    ///     records of files too.
    public init(
        _ inner: any RecordReader, inputs: [CampaignInput], resultsPath: String, journalPath: String,
        isAnswered: @escaping (RecordKey) -> Bool
    ) throws(PipelineError) {
        self.inner = inner
        self.isAnswered = isAnswered
        expected = try Expectations(inputs: inputs, resultsPath: resultsPath, journalPath: journalPath)
    }

    /// Whether any of `inputs` is a stream.
    public static func applies(to inputs: [CampaignInput]) -> Bool { inputs.contains(where: \.isStream) }

    /// How far the inner stream has read its inputs.
    public var readProgress: ReadProgress? { inner.readProgress }

    /// Records read ahead and not handed out yet.
    var readAheadCount: Int { readAhead.count }

    /// Prepares the inner stream; throws when its inputs cannot be opened.
    public func prepareToStart() throws(PipelineError) {
        try inner.prepareToStart()
        while readAhead.count < Self.readAheadLimit {
            guard let record = try nextInner() else { break }
            try expected.check(record)
            let known = expected.knows(record.key) || isAnswered(record.key)
            readAhead.append(record)
            if !known { break }
        }
        readAhead.reverse()
    }

    /// The next record not finished by an earlier run; nil at the end.
    public func nextRecord() throws -> CampaignRecord? {
        if let record = readAhead.popLast() { return record }
        guard let record = try nextInner() else { return nil }
        try expected.check(record)
        return record
    }

    private func nextInner() throws(PipelineError) -> CampaignRecord? {
        do {
            return try inner.nextRecord()
        } catch let error as PipelineError {
            throw error
        } catch {
            throw PipelineError(.readFailed, "\(error)")
        }
    }
}

// MARK: - Expectations

extension ContinuedStream {
    /// What the earlier runs wrote about the records of the streams: per record key, the first result line's
    /// token and topic (hashed) and its line number, and the last digest journaled with a send.
    struct Expectations {
        /// A result line: its token and topic hashed (0 for none), and its line number in the result file.
        typealias Line = (token: UInt64, topic: UInt64, number: Int)

        /// The inputs as messages name them (`standard input` for `-`).
        let names: [String]
        /// The file indexes of the inputs that are streams: only their records are checked.
        let streams: Set<Int>
        let resultsPath: String, journalPath: String
        private(set) var lines: [UInt64: Line] = [:]
        private(set) var digests: [UInt64: (digest: UInt64, number: Int)] = [:]

        init(inputs: [CampaignInput], resultsPath: String, journalPath: String) throws(PipelineError) {
            names = inputs.map { $0.path == "-" ? "standard input" : $0.path }
            streams = Set(inputs.indices.filter { inputs[$0].isStream })
            self.resultsPath = resultsPath
            self.journalPath = journalPath
            let paths = inputs.map(\.path)
            if POSIXFile.exists(resultsPath) {
                let reader = try ResultReader(path: resultsPath, inputFiles: InputFileList(paths), strictLastLine: true)
                while let record = try reader.next() {
                    let key = record.key
                    guard streams.contains(key.fileIndex), lines[key.packed] == nil else { continue }
                    lines[key.packed] = (Self.hash(record.token), Self.hash(record.topic), reader.lineNumber)
                }
            }
            if POSIXFile.exists(journalPath) {
                var digests = self.digests
                let streams = self.streams
                var number = 0
                try SendJournal.read(source: try FileByteSource(path: journalPath), name: journalPath) { entry in
                    number += 1
                    guard let digest = entry.digest, streams.contains(entry.fileIndex) else { return }
                    digests[RecordKey(fileIndex: entry.fileIndex, line: entry.line).packed] = (digest, number)
                }
                self.digests = digests
            }
        }

        /// Whether the earlier runs wrote anything checkable about the record.
        func knows(_ key: RecordKey) -> Bool {
            lines[key.packed] != nil || digests[key.packed] != nil
        }

        /// Throws `campaignChanged` when the record is not the one the earlier runs answered for.
        func check(_ record: CampaignRecord) throws(PipelineError) {
            guard streams.contains(record.key.fileIndex) else { return }
            let notification = record.notification
            if let line = lines[record.key.packed] {
                let token = notification?.token.hex ?? record.tokenText
                let topic = notification?.topic.value ?? record.topicText
                if Self.hash(token) != line.token {
                    throw mismatch(record.key, "has another token than", "line \(line.number) of \(resultsPath)")
                }
                if Self.hash(topic) != line.topic {
                    throw mismatch(record.key, "has another topic than", "line \(line.number) of \(resultsPath)")
                }
            }
            if let sent = digests[record.key.packed] {
                let place = "what line \(sent.number) of \(journalPath) says was sent"
                guard let notification else { throw mismatch(record.key, "is invalid now, unlike", place) }
                if SentDigest.of(notification) != sent.digest {
                    throw mismatch(
                        record.key, "holds another notification (token, topic, headers or payload) than", place)
                }
            }
        }

        private func mismatch(_ key: RecordKey, _ what: String, _ earlier: String) -> PipelineError {
            let name = names.indices.contains(key.fileIndex) ? names[key.fileIndex] : "input \(key.fileIndex)"
            return PipelineError(
                .campaignChanged,
                "\(name) is not the stream the unfinished run in \(resultsPath) "
                    + "read: its line \(key.line) \(what) \(earlier). Nothing was sent. Give the run the stream it read "
                    + "before, or name another --results file for this one")
        }

        private static func hash(_ text: String?) -> UInt64 {
            guard let text else { return 0 }
            return StableHash.hash(text.utf8) | 1
        }
    }
}
