import PipelineTestSupport
import Testing

@testable import APNSPipeline

@Suite("Line reader")
struct LineReaderTests {
    typealias Support = PipelineTestSupport

    @Test("LF, CRLF, an empty line and a last line without newline, at every chunk size", arguments: [1, 2, 3, 5, 64])
    func lineEnds(chunkSize: Int) throws {
        let reader = LineReader(
            source: MemoryByteSource("a\r\nbb\n\nccc\r\nlast", chunkSize: chunkSize), maximumLineLength: 16,
            chunkSize: chunkSize)
        let lines = try Support.lines(of: reader)
        #expect(lines.map(\.0) == [1, 2, 3, 4, 5])
        #expect(lines.map(\.1) == ["a", "bb", "", "ccc", "last"])
        #expect(lines.map(\.2) == [true, true, true, true, false])
    }

    @Test("a trailing newline does not make an extra line; an empty input has none")
    func trailingNewline() throws {
        #expect(try Support.lines(of: LineReader(source: MemoryByteSource("x\n"))).map(\.1) == ["x"])
        #expect(try Support.lines(of: LineReader(source: MemoryByteSource(""))).isEmpty)
        #expect(try Support.lines(of: LineReader(source: MemoryByteSource("\n"))).map(\.1) == [""])
    }

    @Test(
        "a line over the maximum is reported by number and skipped; the next line is intact",
        arguments: [1, 4, 7, 1000])
    func tooLong(chunkSize: Int) throws {
        let long = String(repeating: "x", count: 50)
        let text = "ok\n\(long)\nexact10chr\n\(String(repeating: "y", count: 11))\r\nnext\n\(long)"
        let reader = LineReader(
            source: MemoryByteSource(text, chunkSize: chunkSize), maximumLineLength: 10, chunkSize: chunkSize)
        let lines = try Support.lines(of: reader)
        #expect(lines.map(\.0) == [1, 2, 3, 4, 5, 6])
        #expect(lines.map(\.1) == ["ok", nil, "exact10chr", nil, "next", nil])
        #expect(lines.map(\.2) == [true, true, true, true, true, false])
    }

    @Test("a line of exactly the maximum with CRLF is accepted")
    func exactWithCRLF() throws {
        let reader = LineReader(
            source: MemoryByteSource("0123456789\r\nz", chunkSize: 3), maximumLineLength: 10, chunkSize: 3)
        #expect(try Support.lines(of: reader).map(\.1) == ["0123456789", "z"])
    }

    @Test("the buffer is allocated once at its bound and never grows, whatever the input")
    func bufferBound() throws {
        var text = ""
        for index in 0..<2000 { text += String(repeating: "a", count: index % 300) + "\n" }
        let reader = LineReader(source: MemoryByteSource(text, chunkSize: 97), maximumLineLength: 128, chunkSize: 97)
        let bound = 128 + 2 + 97
        var count = 0
        var tooLong = 0
        while let line = try reader.next() {
            count += 1
            if line.isTooLong { tooLong += 1 }
            #expect(reader.buffer.count == bound)
            #expect(reader.buffer.capacity < bound * 2)
        }
        #expect(count == 2000)
        #expect(tooLong == (0..<2000).filter { $0 % 300 > 128 }.count)
    }
}
