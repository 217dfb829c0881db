#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
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

    /// Opens for appending, creating the file (mode 0644) if needed; `truncate` empties it first.
    static func openForAppending(_ path: String, truncate: Bool) throws(PipelineError) -> POSIXFile {
        let flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0)
        let descriptor = retryingOnInterrupt { open(path, flags, 0o644) }
        guard descriptor >= 0 else { throw PipelineError(.openFailed, "\(path): \(lastErrorText())") }
        return POSIXFile(path: path, descriptor: descriptor, ownsDescriptor: true)
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

    /// Writes `bytes[0..<count]` completely (looping over short writes).
    func write(_ bytes: [UInt8], count: Int) throws(PipelineError) {
        precondition(count >= 0 && count <= bytes.count, "write range outside the buffer")
        var written = 0
        while written < count {
            let result = bytes.withUnsafeBytes { raw in
                Self.retryingOnInterrupt { systemWrite(descriptor, raw.baseAddress.map { $0 + written }, count - written) }
            }
            guard result > 0 else { throw PipelineError(.writeFailed, "\(path): \(Self.lastErrorText())") }
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
