/// Opens the files a run appends to (results, journal), and on resume cuts off a torn last line: after a
/// `kill -9` the last line may lack its end, and a new line must never be glued onto it.
public enum AppendOnlyFile {
    /// How to open: start empty, or continue.
    public enum Mode: Sendable, Hashable {
        /// Start empty (the file is created or truncated).
        case create
        /// Continue the file (created if missing); a last line without its `\n` is cut off.
        case append
    }

    /// An opened file, whether it is empty, and how much of a torn tail was cut.
    struct Opened {
        let file: POSIXFile
        let isEmpty: Bool
        let droppedTornBytes: Int
    }

    static func open(_ path: String, mode: Mode) throws(PipelineError) -> Opened {
        if path == "-" { return Opened(file: .standardOutput(), isEmpty: true, droppedTornBytes: 0) }
        let file = try POSIXFile.openForAppending(path, truncate: mode == .create)
        guard mode == .append, let size = file.regularFileSize(), size > 0 else {
            return Opened(file: file, isEmpty: true, droppedTornBytes: 0)
        }
        let reader = try POSIXFile.openForReading(path)
        let keep = try lengthThroughLastNewline(of: reader, size: size)
        if keep < size { try file.truncate(to: keep) }
        return Opened(file: file, isEmpty: keep == 0, droppedTornBytes: Int(size - keep))
    }

    /// The length of the file up to and including its last `\n` (0 if it has none), reading backwards.
    private static func lengthThroughLastNewline(of file: POSIXFile, size: Int64) throws(PipelineError) -> Int64 {
        let step: Int64 = 64 * 1024
        var end = size
        while end > 0 {
            let start = max(0, end - step)
            guard let bytes = file.peek(at: start, count: Int(end - start)) else {
                throw PipelineError(.readFailed, "\(file.path): cannot read the end of the file")
            }
            if let last = bytes.lastIndex(of: UInt8(ascii: "\n")) { return start + Int64(last) + 1 }
            end = start
        }
        return 0
    }
}
