/// Names one input record across runs: the input file's position in the run's list of inputs (0-based) and the
/// record's 1-based line in it (for CSV: the physical line where the record starts). Packs into one `UInt64`.
public struct RecordKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let fileIndex: Int
    public let line: Int

    public init(fileIndex: Int, line: Int) {
        self.fileIndex = fileIndex
        self.line = line
    }

    /// The key as one number: 24 bits of file index, 40 bits of line.
    public var packed: UInt64 { UInt64(truncatingIfNeeded: fileIndex) << 40 | UInt64(truncatingIfNeeded: line) & 0xFF_FFFF_FFFF }

    public static func < (lhs: RecordKey, rhs: RecordKey) -> Bool { lhs.packed < rhs.packed }
    public var description: String { "\(fileIndex):\(line)" }
}
