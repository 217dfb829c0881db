import PipelineTestSupport
import Testing

@testable import APNSPipeline

@Suite("CSV reader (RFC 4180)")
struct CSVReaderTests {
    /// Every record as (line, fields, problem).
    private func records(_ text: String, chunkSize: Int = 1 << 16, maximum: Int = 1024) throws -> [(
        Int, [String], CSVReader.Record.Problem?
    )] {
        try records(Array(text.utf8), chunkSize: chunkSize, maximum: maximum)
    }

    private func records(_ bytes: [UInt8], chunkSize: Int = 1 << 16, maximum: Int = 1024) throws -> [(
        Int, [String], CSVReader.Record.Problem?
    )] {
        let reader = CSVReader(
            source: MemoryByteSource(bytes, chunkSize: chunkSize), maximumRecordLength: maximum,
            chunkSize: max(4, chunkSize))
        var out: [(Int, [String], CSVReader.Record.Problem?)] = []
        while let record = try reader.next() {
            let fields = record.problem == .tooLong ? [] : (0..<record.fieldCount).map { reader.fieldText($0) }
            out.append((record.line, fields, record.problem))
        }
        return out
    }

    @Test(
        "quotes, doubled quotes, embedded commas, newlines and CRLF; line numbers where records start",
        arguments: [1, 2, 3, 7, 4096])
    func quoting(chunkSize: Int) throws {
        let text = "token,msg\r\nt1,\"a, b\"\r\nt2,\"say \"\"hi\"\"\"\r\nt3,\"two\nlines\r\nthree\"\r\nt4,plain\r\n"
        let result = try records(text, chunkSize: chunkSize)
        #expect(result.map(\.0) == [1, 2, 3, 4, 7])
        #expect(
            result.map(\.1) == [
                ["token", "msg"], ["t1", "a, b"], ["t2", "say \"hi\""], ["t3", "two\nlines\r\nthree"], ["t4", "plain"],
            ])
        #expect(result.allSatisfy { $0.2 == nil })
    }

    @Test("a UTF-8 byte-order mark at the start is skipped, even split across chunks", arguments: [1, 2, 4096])
    func byteOrderMark(chunkSize: Int) throws {
        let result = try records([0xEF, 0xBB, 0xBF] + Array("token,x\na,b".utf8), chunkSize: chunkSize)
        #expect(result.map(\.1) == [["token", "x"], ["a", "b"]])
    }

    @Test("empty lines are skipped and still counted; empty fields are kept; no final newline")
    func emptyLinesAndFields() throws {
        let result = try records("a,b\n\n\r\n,\n\"\",x\nlast,")
        #expect(result.map(\.0) == [1, 4, 5, 6])
        #expect(result.map(\.1) == [["a", "b"], ["", ""], ["", "x"], ["last", ""]])
    }

    @Test("ragged rows come back with their own field count")
    func ragged() throws {
        let result = try records("a,b,c\n1,2\n1,2,3,4\n")
        #expect(result.map { $0.1.count } == [3, 2, 4])
    }

    @Test("an unterminated quote at the end of the input is a problem of the record where it starts")
    func unterminated() throws {
        let result = try records("h\nok\n\"open\nstill\nopen")
        #expect(result.count == 3)
        #expect(result[2].0 == 3)
        #expect(result[2].2 == .unterminatedQuote)
    }

    @Test("text after a closing quote is a problem; the next record is read normally")
    func textAfterQuote() throws {
        let result = try records("\"ab\"c,d\nx,y\n\"q\"\rz\n")
        #expect(result[0].2 == .textAfterClosingQuote)
        #expect(result[1].1 == ["x", "y"])
        #expect(result[1].2 == nil)
        #expect(result[2].2 == .textAfterClosingQuote)
    }

    @Test("lenient: a quote inside an unquoted field and a lone CR are data")
    func lenient() throws {
        let result = try records("a\"b,c\rd\n")
        #expect(result.map(\.1) == [["a\"b", "c\rd"]])
        #expect(result[0].2 == nil)
    }

    @Test("a record longer than the maximum is reported, its quoted newlines still tracked", arguments: [1, 5, 4096])
    func tooLong(chunkSize: Int) throws {
        let long = String(repeating: "z", count: 40)
        let result = try records("a,b\n\"\(long)\n\(long)\",x\nc,d\n", chunkSize: chunkSize, maximum: 32)
        #expect(result.map(\.0) == [1, 2, 4])
        #expect(result[1].2 == .tooLong)
        #expect(result[2].1 == ["c", "d"])
    }

    @Test("many commas cannot grow the field table past the bound")
    func manyCommas() throws {
        let result = try records(String(repeating: ",", count: 10_000) + "\nok\n", maximum: 100)
        #expect(result[0].2 == .tooLong)
        #expect(result[1].1 == ["ok"])
        #expect(result[1].0 == 2)
    }
}
