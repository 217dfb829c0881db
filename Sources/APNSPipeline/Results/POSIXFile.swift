#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Musl)
    internal import Musl
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// Owns one open file descriptor and is the only place in the pipeline that calls read(2), write(2) and friends
/// (the wrapper file for the C library: every unsafe pointer in this module lives here). Closes the descriptor in
/// `deinit` unless it was borrowed (standard input).
final class POSIXFile {
    /// The path as given, for messages (`-` for standard input).
    let path: String
    let descriptor: Int32
    private let ownsDescriptor: Bool

    private init(path: String, descriptor: Int32, ownsDescriptor: Bool) {
        self.path = path
        self.descriptor = descriptor
        self.ownsDescriptor = ownsDescriptor
    }

    deinit {
        if ownsDescriptor { _ = close(descriptor) }
    }

    /// Standard input, borrowed: never closed.
    static func standardInput() -> POSIXFile {
        POSIXFile(path: "-", descriptor: 0, ownsDescriptor: false)
    }

    /// Standard output, borrowed: never closed.
    static func standardOutput() -> POSIXFile {
        POSIXFile(path: "-", descriptor: 1, ownsDescriptor: false)
    }

    /// Wraps a descriptor this object now owns (closes it in `deinit`).
    static func adopting(_ descriptor: Int32, path: String) -> POSIXFile {
        POSIXFile(path: path, descriptor: descriptor, ownsDescriptor: true)
    }

    /// Wraps a descriptor someone else owns and closes (for example a Foundation `Pipe`).
    static func borrowing(_ descriptor: Int32, path: String) -> POSIXFile {
        POSIXFile(path: path, descriptor: descriptor, ownsDescriptor: false)
    }

    static func openForReading(_ path: String) throws(PipelineError) -> POSIXFile {
        let descriptor = retryingOnInterrupt { open(path, O_RDONLY | O_CLOEXEC) }
        guard descriptor >= 0 else { throw PipelineError(.openFailed, "\(path): \(lastErrorText())") }
        return POSIXFile(path: path, descriptor: descriptor, ownsDescriptor: true)
    }

    /// Whether something exists at `path`.
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// Opens a run's own file for appending (results, journal), creating it with mode 0600 (less if the umask
    /// says so) and never through a symbolic link planted at `path`; `truncate` empties it first. A write that
    /// fails part-way is rolled back, so the file never ends in a piece of a batch.
    static func openForAppending(_ path: String, truncate: Bool) throws(PipelineError) -> POSIXFile {
        let flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | (truncate ? O_TRUNC : 0)
        let file = try openPrivate(path, flags: flags)
        file.rollsBackFailedWrites = true
        return file
    }

    /// Opens (creating, mode 0600 before the umask) a small file this run rewrites whole: a lock file.
    static func openForLocking(_ path: String) throws(PipelineError) -> POSIXFile {
        try openPrivate(path, flags: O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW)
    }

    /// Opens (creating, mode 0600 before the umask) a report file to be written whole: summary, metrics.
    static func openForReplacing(_ path: String) throws(PipelineError) -> POSIXFile {
        try openPrivate(path, flags: O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC)
    }

    private static func openPrivate(_ path: String, flags: Int32, mode: mode_t = 0o600) throws(PipelineError)
        -> POSIXFile
    {
        let descriptor = retryingOnInterrupt { open(path, flags, mode) }
        guard descriptor >= 0 else {
            if errno == ELOOP, flags & O_NOFOLLOW != 0 {
                throw PipelineError(
                    .openFailed,
                    "\(path) is a symbolic link: refusing to write through it (remove it, or name the real file)")
            }
            throw PipelineError(.openFailed, "\(path): \(lastErrorText())")
        }
        return POSIXFile(path: path, descriptor: descriptor, ownsDescriptor: true)
    }

    /// Creates a scratch file for reading and writing in `directory` (mode 0600) and unlinks it at once: it has no
    /// name, so the kernel frees it when the descriptor closes, also when the process crashes or is killed.
    static func createUnlinkedScratch(inDirectory directory: String, prefix: String) throws(PipelineError) -> POSIXFile
    {
        var template = Array("\(directory)/.\(prefix)-XXXXXX".utf8CString)
        let created = retryingOnInterrupt { mkstemp(&template) }
        guard created >= 0 else {
            throw PipelineError(.openFailed, "cannot create a scratch file in \(directory): \(lastErrorText())")
        }
        // Opened again with O_CLOEXEC (mkstemp cannot set it), so a gzip child never inherits it.
        let path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let descriptor = retryingOnInterrupt { open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW) }
        let openError = errno
        _ = unlink(path)
        _ = close(created)
        guard descriptor >= 0 else {
            errno = openError
            throw PipelineError(.openFailed, "cannot create a scratch file in \(directory): \(lastErrorText())")
        }
        return POSIXFile(path: path, descriptor: descriptor, ownsDescriptor: true)
    }

    /// Whether a regular file's failed write is cut back to where it started (files opened by `openForAppending`).
    private var rollsBackFailedWrites = false

    /// Takes an exclusive `flock` without waiting; false when another open file description holds it. The
    /// kernel drops it when the descriptor closes, also when the process is killed.
    func tryLockExclusively() throws(PipelineError) -> Bool {
        if Self.retryingOnInterrupt({ flock(descriptor, LOCK_EX | LOCK_NB) }) == 0 { return true }
        if errno == EWOULDBLOCK { return false }
        throw PipelineError(.openFailed, "\(path): cannot lock: \(Self.lastErrorText())")
    }

    /// Whether `path` still names the file this descriptor has open (it was not removed or replaced).
    func isStill(at path: String) -> Bool {
        var open = stat()
        var named = stat()
        guard fstat(descriptor, &open) == 0, lstat(path, &named) == 0 else { return false }
        return open.st_dev == named.st_dev && open.st_ino == named.st_ino
    }

    /// Forces written data to the disk (fdatasync(2)).
    func synchronizeData() throws(PipelineError) {
        guard Self.retryingOnInterrupt({ fdatasync(descriptor) }) == 0 else {
            throw PipelineError(.writeFailed, "\(path): fdatasync: \(Self.lastErrorText())")
        }
    }

    /// Removes a file; a file already gone is fine.
    static func remove(_ path: String) {
        _ = unlink(path)
    }

    /// Renames `source` over `destination` (atomic within a file system).
    static func rename(_ source: String, over destination: String) throws(PipelineError) {
        guard systemRename(source, destination) == 0 else {
            throw PipelineError(.writeFailed, "\(destination): cannot rename \(source) over it: \(lastErrorText())")
        }
    }

    /// Reads at most `count` bytes into `buffer[offset...]`; 0 means end of file.
    func read(into buffer: inout [UInt8], at offset: Int, count: Int) throws(PipelineError) -> Int {
        precondition(offset >= 0 && count >= 0 && offset + count <= buffer.count, "read range outside the buffer")
        let result = buffer.withUnsafeMutableBytes { raw in
            Self.retryingOnInterrupt { systemRead(descriptor, raw.baseAddress.map { $0 + offset }, count) }
        }
        guard result >= 0 else { throw PipelineError(.readFailed, "\(path): \(Self.lastErrorText())") }
        return result
    }

    /// Writes `bytes[0..<count]` completely (looping over short writes). When it fails part-way (a full disk,
    /// the file-size limit), a file opened by `openForAppending` is cut back to its length before the call: its
    /// length after the failure less the bytes this call appended, so a write that succeeds costs no `fstat`.
    func write(_ bytes: [UInt8], count: Int) throws(PipelineError) {
        precondition(count >= 0 && count <= bytes.count, "write range outside the buffer")
        var written = 0
        while written < count {
            let result = bytes.withUnsafeBytes { raw in
                Self.retryingOnInterrupt {
                    systemWrite(descriptor, raw.baseAddress.map { $0 + written }, count - written)
                }
            }
            guard result > 0 else {
                let error = PipelineError(.writeFailed, "\(path): \(Self.lastErrorText())")
                if written > 0, rollsBackFailedWrites, let end = regularFileSize() {
                    _ = ftruncate(descriptor, off_t(end - Int64(written)))
                }
                throw error
            }
            written += result
        }
    }

    /// Reads `count` bytes at `offset` without moving the file position; nil if the descriptor cannot seek
    /// (a pipe) or fails. May return fewer bytes near the end of the file.
    func peek(at offset: Int64, count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        let result = bytes.withUnsafeMutableBytes { raw in
            Self.retryingOnInterrupt { pread(descriptor, raw.baseAddress, count, off_t(offset)) }
        }
        guard result >= 0 else { return nil }
        bytes.removeLast(count - result)
        return bytes
    }

    /// Reads up to `count` bytes at `offset` (pread(2), looping over short reads) without moving the file
    /// position; fewer only at the end of the file. A failure is an error, never a short answer.
    func read(at offset: Int64, count: Int) throws(PipelineError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let result = bytes.withUnsafeMutableBytes { raw in
                Self.retryingOnInterrupt {
                    pread(descriptor, raw.baseAddress.map { $0 + done }, count - done, off_t(offset) + off_t(done))
                }
            }
            guard result >= 0 else { throw PipelineError(.readFailed, "\(path): \(Self.lastErrorText())") }
            if result == 0 { break }
            done += result
        }
        bytes.removeLast(count - done)
        return bytes
    }

    /// Like `peek`, at the descriptor's current position (standard input may be a redirected file).
    func peekAtCurrentPosition(count: Int) -> [UInt8]? {
        let position = lseek(descriptor, 0, SEEK_CUR)
        guard position >= 0 else { return nil }
        return peek(at: Int64(position), count: count)
    }

    /// The file's size in bytes, or nil when it is not a regular file.
    func regularFileSize() -> Int64? {
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    /// The size of the regular file at `path`, or nil when it is something else (a pipe, a device) or missing.
    static func regularFileSize(atPath path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    /// Whether `path` itself is a symbolic link.
    static func isSymbolicLink(atPath path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
    }

    /// Whether `path` names something read once, in order (following symbolic links): a pipe, a FIFO, a device or a
    /// socket (`<(zcat c.gz)`, `/dev/stdin`), not a regular file or a directory.
    static func isStream(atPath path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        let kind = info.st_mode & S_IFMT
        return kind != S_IFREG && kind != S_IFDIR
    }

    /// Throws `openFailed` with the reason when `path` cannot be opened for reading, without opening it (a FIFO
    /// opened and closed early would lose its writer).
    static func checkReadable(_ path: String) throws(PipelineError) {
        guard access(path, R_OK) == 0 else { throw PipelineError(.openFailed, "\(path): \(lastErrorText())") }
    }

    /// Whether this process may create files in the directory `path`.
    static func isWritableDirectory(_ path: String) -> Bool {
        access(path, W_OK | X_OK) == 0
    }

    /// Whether `path` names a directory (following symbolic links).
    static func isDirectory(atPath path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// What `path` names itself (a symbolic link is not followed), for `replaceAtomically`.
    private enum ReplacedKind {
        /// Nothing yet, a regular file or a directory (the rename then fails and says so).
        case replaceable
        /// A symbolic link (`/dev/stdout` is one).
        case symbolicLink
        /// A device (`/dev/null`), a FIFO or a socket.
        case special
    }

    private static func replacedKind(atPath path: String) -> ReplacedKind {
        var info = stat()
        guard lstat(path, &info) == 0 else { return .replaceable }
        switch info.st_mode & S_IFMT {
        case S_IFREG, S_IFDIR: return .replaceable
        case S_IFLNK: return .symbolicLink
        default: return .special
        }
    }

    /// Replaces the file at `path` whole and atomically: the bytes go to a new private file beside it (mode 0600
    /// before the umask), forced to the disk, then renamed over `path`, so a reader or a crash sees the old file or
    /// the new one, never a part (a campaign record). A `path` that names a device, a FIFO or a socket (/dev/null, a
    /// pipe a script reads) is written in place instead: renaming over it would put a regular file where the device
    /// was (as root, in place of /dev/null itself). With `throughLinks`, a symbolic link (`/dev/stdout`) is written
    /// through in place too; without, it is replaced like a file, never written through (the campaign record).
    static func replaceAtomically(
        _ path: String, with bytes: [UInt8], mode: mode_t = 0o600, throughLinks: Bool = false
    ) throws(PipelineError) {
        switch replacedKind(atPath: path) {
        case .special:
            return try writeInPlace(path, bytes, flags: O_NOFOLLOW, mode: mode)
        case .symbolicLink where throughLinks:
            return try writeInPlace(path, bytes, flags: O_CREAT | O_TRUNC, mode: mode)
        case .symbolicLink, .replaceable:
            break
        }
        let temporary = "\(path).tmp-\(getpid())"
        _ = unlink(temporary)
        let file: POSIXFile
        do {
            file = try openPrivate(temporary, flags: O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode: mode)
        } catch {
            // Named by the path the user gave, not by the new file beside it that could not be made.
            throw PipelineError(error.kind, "\(path): cannot write the new file beside it: \(lastErrorText())")
        }
        do throws(PipelineError) {
            try file.write(bytes, count: bytes.count)
            guard retryingOnInterrupt({ fsync(file.descriptor) }) == 0 else {
                throw PipelineError(.writeFailed, "\(temporary): fsync: \(lastErrorText())")
            }
            guard systemRename(temporary, path) == 0 else {
                throw PipelineError(.writeFailed, "\(path): cannot rename \(temporary) over it: \(lastErrorText())")
            }
        } catch {
            _ = unlink(temporary)
            throw error
        }
    }

    /// Writes `bytes` as the content of what `path` names, opened in place (`extraFlags` added): without waiting for
    /// a reader (a FIFO nobody reads fails at once, ENXIO), then writing blocking.
    private static func writeInPlace(_ path: String, _ bytes: [UInt8], flags extraFlags: Int32, mode: mode_t)
        throws(PipelineError)
    {
        let file = try openPrivate(path, flags: O_WRONLY | O_CLOEXEC | O_NONBLOCK | extraFlags, mode: mode)
        _ = fcntl(file.descriptor, F_SETFL, fcntl(file.descriptor, F_GETFL) & ~O_NONBLOCK)
        try file.write(bytes, count: bytes.count)
    }

    /// The descriptor's file position (shared with a child process that inherited it), or nil for a pipe.
    func currentPosition() -> Int64? {
        let position = lseek(descriptor, 0, SEEK_CUR)
        return position >= 0 ? Int64(position) : nil
    }

    /// Cuts a regular file to `length` bytes.
    func truncate(to length: Int64) throws(PipelineError) {
        guard ftruncate(descriptor, off_t(length)) == 0 else {
            throw PipelineError(.writeFailed, "\(path): cannot truncate: \(Self.lastErrorText())")
        }
    }

    private static func retryingOnInterrupt<T: BinaryInteger>(_ call: () -> T) -> T {
        while true {
            let result = call()
            if result >= 0 || errno != EINTR { return result }
        }
    }

    private static func lastErrorText() -> String {
        String(cString: strerror(errno))
    }
}

// File-scope wrappers: inside `POSIXFile` the names `read` and `write` resolve to its own methods.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}

private func systemRename(_ source: String, _ destination: String) -> Int32 {
    rename(source, destination)
}
