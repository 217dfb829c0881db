import Foundation
import Glibc
import Synchronization
import Testing

@testable import APNSPipeline

/// Output files written whole (summary, metrics, the mock's port file, CA and counters): replaced atomically when
/// regular, written in place when a device or a FIFO, which must stay one (as root, /dev/null itself).
@Suite("Output files written whole")
struct OutputFileTests {
    private static func kind(_ path: String) -> mode_t? {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & S_IFMT : nil
    }

    @Test("a FIFO given as the path gets the bytes and stays a FIFO; a regular file is replaced; a new one made")
    func fifoStaysAFIFO() throws {
        let directory = try PipelineTestSupport.temporaryDirectory()
        let fifo = directory.appendingPathComponent("out.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)  // a reader first, as a script reading the pipe
        #expect(reader >= 0)
        defer { close(reader) }

        try OutputFile.write(Array("metrics 1\n".utf8), toPath: fifo)
        #expect(Self.kind(fifo) == S_IFIFO)
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(reader, &buffer, buffer.count)
        #expect(String(decoding: buffer.prefix(max(0, count)), as: UTF8.self) == "metrics 1\n")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["out.fifo"], "no temporary left")

        let regular = directory.appendingPathComponent("port").path
        try OutputFile.write(Array("1\n".utf8), toPath: regular)
        try OutputFile.write(Array("443\n".utf8), toPath: regular)
        #expect(Self.kind(regular) == S_IFREG)
        #expect(try String(contentsOfFile: regular, encoding: .utf8) == "443\n")
    }

    @Test("a symbolic link (as /dev/stdout is) is written through and kept; the campaign record replaces it instead")
    func symbolicLinks() throws {
        let directory = try PipelineTestSupport.temporaryDirectory()
        let target = try PipelineTestSupport.write("an older, longer content\n", to: "target.prom", in: directory)
        let link = directory.appendingPathComponent("link.prom").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)

        try OutputFile.write(Array("m 1\n".utf8), toPath: link)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target, "the link is kept")
        #expect(
            try String(contentsOfFile: target, encoding: .utf8) == "m 1\n", "its target holds the new content alone")

        // The campaign record is never written through a link planted in its place: the link itself is replaced.
        try POSIXFile.replaceAtomically(link, with: Array("{}\n".utf8))
        #expect(Self.kind(link) == S_IFREG)
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "m 1\n")
    }

    @Test("a FIFO nobody reads is an error at once, not a run that hangs")
    func fifoWithoutReader() throws {
        let directory = try PipelineTestSupport.temporaryDirectory()
        let fifo = directory.appendingPathComponent("nobody.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let finished = DispatchSemaphore(value: 0)
        let failure = Mutex<String?>(nil)
        Thread.detachNewThread {
            do throws(PipelineError) {
                try OutputFile.write(Array("x\n".utf8), toPath: fifo)
            } catch {
                failure.withLock { $0 = error.description }
            }
            finished.signal()
        }
        guard finished.wait(timeout: .now() + 5) == .success else {
            Issue.record("the write waited for a reader")
            return
        }
        let message = try #require(failure.withLock { $0 })
        #expect(message.contains("nobody.fifo"), "\(message)")
        #expect(Self.kind(fifo) == S_IFIFO)
    }
}
