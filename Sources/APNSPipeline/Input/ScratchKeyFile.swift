/// The duplicate filter's exact keys, appended one after another to an unlinked scratch file (nothing is left on
/// the disk after the run, even after a crash) through a 64 KiB buffer, and read back with pread when a
/// fingerprint matches. The file is created on the first append, so a run that never uses the filter makes none.
/// Every I/O failure is thrown (`PipelineError`, naming the directory), never answered as "not stored".
final class ScratchKeyFile {
    static let bufferBytes = 1 << 16
    static let filePrefix = "apns-bulk-pairs"

    /// Where the file is created.
    let directory: String
    @exclusivity(unchecked)
    private var file: POSIXFile?
    /// Appended bytes not yet written, `buffer[..<pendingCount]`, which start at `writtenLength` in the file; the
    /// buffer is allocated with the file.
    @exclusivity(unchecked)
    private var buffer: [UInt8] = []
    @exclusivity(unchecked)
    private var pendingCount = 0
    @exclusivity(unchecked)
    private var writtenLength = 0

    init(directory: String) {
        self.directory = directory
    }

    /// Uses an already open `file` (tests give it one whose writes fail).
    init(directory: String, file: POSIXFile) {
        self.directory = directory
        self.file = file
        buffer = [UInt8](repeating: 0, count: Self.bufferBytes)
    }

    /// Bytes appended so far: the offset the next key will have.
    var length: Int { writtenLength + pendingCount }
    /// Bytes held in memory (the write buffer).
    var memoryBytes: Int { buffer.capacity }

    /// Appends the key `bytes[key]`; returns its offset.
    @discardableResult
    func append(_ bytes: [UInt8], _ key: Range<Int>) throws(PipelineError) -> Int {
        if file == nil {
            file = try POSIXFile.createUnlinkedScratch(inDirectory: directory, prefix: Self.filePrefix)
            buffer = [UInt8](repeating: 0, count: Self.bufferBytes)
        }
        precondition(key.count <= Self.bufferBytes, "a key longer than the buffer")
        let offset = length
        if pendingCount + key.count > Self.bufferBytes { try flush() }
        Self.copy(bytes, key, into: &buffer, at: pendingCount)
        pendingCount += key.count
        return offset
    }

    /// Whether the bytes stored at `offset` begin with the key `bytes[key]`.
    func holds(_ bytes: [UInt8], _ key: Range<Int>, at offset: Int) throws(PipelineError) -> Bool {
        if offset >= writtenLength {
            let start = offset - writtenLength
            guard start + key.count <= pendingCount else { return false }
            return buffer[start..<start + key.count].elementsEqual(bytes[key])
        }
        if offset + key.count > writtenLength { try flush() }  // the stored key straddles the buffer: write it out
        guard let file else { return false }
        return try file.read(at: Int64(offset), count: key.count).elementsEqual(bytes[key])
    }

    /// Copies `bytes[range]` into `buffer` from `offset`, span to span (no array slice: a reference count on
    /// `bytes` each time): eight bytes a step, the last eight overlapping the step before when the count is not a
    /// multiple of eight.
    private static func copy(_ bytes: [UInt8], _ range: Range<Int>, into buffer: inout [UInt8], at offset: Int) {
        precondition(
            range.lowerBound >= 0 && range.upperBound <= bytes.count && offset >= 0
                && offset + range.count <= buffer.count, "copy outside the buffers")
        let input = bytes.span.bytes
        var span = buffer.mutableSpan
        var output = span.mutableBytes
        // Both ranges were checked above; the loads check their bounds again.
        let count = range.count
        guard count >= 8 else {
            for index in 0..<count {
                let byte = input.unsafeLoadUnaligned(fromByteOffset: range.lowerBound &+ index, as: UInt8.self)
                output.storeBytes(of: byte, toUncheckedByteOffset: offset &+ index, as: UInt8.self)
            }
            return
        }
        var index = 0
        while true {
            let word = input.unsafeLoadUnaligned(fromByteOffset: range.lowerBound &+ index, as: UInt64.self)
            output.storeBytes(of: word, toUncheckedByteOffset: offset &+ index, as: UInt64.self)
            if index &+ 8 == count { return }
            index = Swift.min(index &+ 8, count &- 8)
        }
    }

    private func flush() throws(PipelineError) {
        guard let file, pendingCount > 0 else { return }
        do {
            try file.write(buffer, count: pendingCount)
        } catch {
            throw PipelineError(.writeFailed, "duplicate filter scratch file in \(directory): \(error.detail)")
        }
        writtenLength += pendingCount
        pendingCount = 0
    }
}
