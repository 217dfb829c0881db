import Testing

@testable import APNSPipeline

/// `CSVStateMachine` copies runs of plain field bytes in one go. Fed the whole input at once it must give what it
/// gives fed one byte at a time (where every run is one byte long); under a record limit, a record must be too long
/// exactly when its field bytes plus its field count exceed the limit, as when bytes were appended one by one.
@Suite("CSV state machine: runs of field bytes")
struct CSVStateMachineRunTests {
    /// One record as the machine yields it.
    struct Yielded: Equatable {
        let line: Int
        let problem: CSVReader.Record.Problem?
        let fields: [String]
        let fieldBytes: Int
        let physicalLine: Int
    }

    /// Every record the machine yields, fed `step` bytes at a time.
    static func records(_ bytes: [UInt8], step: Int, maximum: Int) -> [Yielded] {
        var machine = CSVStateMachine(maximumRecordLength: maximum)
        machine.beginRecord()
        var out: [Yielded] = []
        func yielded(_ record: CSVReader.Record) -> Yielded {
            var start = 0
            let fields = machine.fieldEnds.map { end in
                defer { start = end }
                return String(decoding: machine.fieldBytes[start..<end], as: UTF8.self)
            }
            return Yielded(
                line: record.line, problem: record.problem, fields: fields, fieldBytes: machine.fieldBytes.count,
                physicalLine: machine.physicalLine
            )
        }
        var position = 0
        while position < bytes.count {
            let (next, record) = machine.feed(bytes, from: position, to: min(bytes.count, position + step))
            position = next
            if let record {
                out.append(yielded(record))
                machine.beginRecord()
            }
        }
        if let record = machine.finishAtEndOfInput() { out.append(yielded(record)) }
        return out
    }

    /// Checks one input: whole against byte by byte without a limit, then each limit against the rule.
    static func check(_ bytes: [UInt8], maxima: [Int]) {
        let unlimited = records(bytes, step: 1 << 20, maximum: 1 << 20)
        #expect(unlimited == records(bytes, step: 1, maximum: 1 << 20), "\(bytes)")
        #expect(unlimited == records(bytes, step: 3, maximum: 1 << 20), "\(bytes)")
        for maximum in maxima {
            let limited = records(bytes, step: 1 << 20, maximum: maximum)
            #expect(limited.count == unlimited.count, "\(bytes) at \(maximum)")
            for (record, reference) in zip(limited, unlimited) {
                let tooLong = reference.fieldBytes + reference.fields.count > maximum
                #expect(record.line == reference.line && record.physicalLine == reference.physicalLine)
                #expect(record.problem == (tooLong ? .tooLong : reference.problem), "\(bytes) at \(maximum)")
                if tooLong {
                    #expect(record.fieldBytes + record.fields.count <= maximum, "\(bytes) at \(maximum)")
                } else {
                    #expect(record == reference, "\(bytes) at \(maximum)")
                }
            }
        }
    }

    @Test("chosen inputs: quoted newlines, doubled quotes, CR, quotes inside unquoted fields, over the limit")
    func chosen() {
        let inputs = [
            "a,b\n\"x\ny\",z\r\nplain \"q\" text,\"a\"\"b\"\n", "\"unterminated\nline", "abc\rdef,\"q\"x\n\n\n,\n",
            String(repeating: "long field ", count: 10) + "," + "\"" + String(repeating: "q\n", count: 20)
                + "\"\nnext,row\n",
        ]
        for text in inputs { Self.check(Array(text.utf8), maxima: [1, 2, 7, 16, 33, 1024]) }
    }

    @Test("1,000 generated inputs agree fed whole and byte by byte, at several record limits")
    func generated() {
        let alphabet: [UInt8] = Array("ab,\"\n\r é".utf8)
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        for _ in 0..<1_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int(state % 60) {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                bytes.append(alphabet[Int(state % UInt64(alphabet.count))])
            }
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            Self.check(bytes, maxima: [1, 3, 10, 25])
        }
    }
}
