/// The duplicate filter's exact keys, appended one after another to an unlinked scratch file (nothing is left on
/// the disk after the run, even after a crash) through a 64 KiB buffer, and read back with pread when a
/// fingerprint matches. The file is created on the first append, so a run that never uses the filter makes none.
/// Every I/O failure is thrown (`PipelineError`, naming the directory), never answered as "not stored".
final class ScratchKeyFile {
    static let bufferBytes = 1 << 16
    static let filePrefix = "apns-bulk-pairs"

    /// Where the file is created.
    let directory: String
    private var file: POSIXFile?
    /// Appended bytes not yet written, which start at `writtenLength` in the file.
    private var pending: [UInt8] = []
    private var writtenLength = 0

    init(directory: String) {
        self.directory = directory
    }

    /// Uses an already open `file` (tests give it one whose writes fail).
    init(directory: String, file: POSIXFile) {
        self.directory = directory
        self.file = file
        pending.reserveCapacity(Self.bufferBytes)
    }

    /// Bytes appended so far: the offset the next key will have.
    var length: Int { writtenLength + pending.count }
    /// Bytes held in memory (the write buffer).
    var memoryBytes: Int { pending.capacity }

    /// Appends `key`; returns its offset.
    func append(_ key: ArraySlice<UInt8>) throws(PipelineError) -> Int {
        if file == nil {
            file = try POSIXFile.createUnlinkedScratch(inDirectory: directory, prefix: Self.filePrefix)
            pending.reserveCapacity(Self.bufferBytes)
        }
        let offset = length
        if pending.count + key.count > Self.bufferBytes { try flush() }
        pending.append(contentsOf: key)
        return offset
    }

    /// Whether the bytes stored at `offset` begin with `key`.
    func holds(_ key: ArraySlice<UInt8>, at offset: Int) throws(PipelineError) -> Bool {
        if offset >= writtenLength {
            let start = offset - writtenLength
            guard start + key.count <= pending.count else { return false }
            return pending[start..<start + key.count].elementsEqual(key)
        }
        if offset + key.count > writtenLength { try flush() }  // the stored key straddles the buffer: write it out
        guard let file else { return false }
        return try file.read(at: Int64(offset), count: key.count).elementsEqual(key)
    }

    private func flush() throws(PipelineError) {
        guard let file, !pending.isEmpty else { return }
        do {
            try file.write(pending, count: pending.count)
        } catch {
            throw PipelineError(.writeFailed, "duplicate filter scratch file in \(directory): \(error.detail)")
        }
        writtenLength += pending.count
        pending.removeAll(keepingCapacity: true)
    }
}
