import Testing

@testable import APNSCore

/// The scan that reports members as it goes (`scanDocument(in:reportingMembersTo:_:)`, and the same to a
/// `JSONMemberVisitor`): same verdict as the plain scan on every input, members in scan order with their depth,
/// nothing deeper than asked.
@Suite("JSONScanner member reports")
struct JSONScannerMemberReportTests {
    /// One reported member: depth, decoded key, and the value's bytes as written.
    struct Report: Equatable, CustomStringConvertible {
        let depth: Int
        let key: String
        let value: String
        var description: String { "\(depth) \(key)=\(value)" }
    }

    private func reports(_ text: String, depth: Int) throws(JSONSyntaxError) -> [Report] {
        let bytes = Array(text.utf8)
        let scanner = JSONScanner(bytes)
        var found: [Report] = []
        _ = try scanner.scanDocument(in: 0..<bytes.count, reportingMembersTo: depth) { depth, key, value in
            found.append(
                Report(
                    depth: depth, key: scanner.decodeString(key),
                    value: String(decoding: bytes[value.range], as: UTF8.self)))
        }
        return found
    }

    @Test("members come once their value is scanned, with the depth of the object holding them")
    func order() throws {
        let text = #"{"a":{"b":{"c":1},"d":[{"e":2}]},"f":"x"}"#
        #expect(try reports(text, depth: 1).map(\.description) == [#"1 a={"b":{"c":1},"d":[{"e":2}]}"#, #"1 f="x""#])
        #expect(
            try reports(text, depth: 2).map(\.description) == [
                #"2 b={"c":1}"#, #"2 d=[{"e":2}]"#, #"1 a={"b":{"c":1},"d":[{"e":2}]}"#, #"1 f="x""#,
            ])
        // "e" sits in an object inside an array inside "a": depth 4 (arrays count as nesting).
        #expect(
            try reports(text, depth: 3).map(\.description) == [
                "3 c=1", #"2 b={"c":1}"#, #"2 d=[{"e":2}]"#, #"1 a={"b":{"c":1},"d":[{"e":2}]}"#, #"1 f="x""#,
            ])
        #expect(try reports(text, depth: 4).contains { $0.description == "4 e=2" })
        #expect(try reports(text, depth: 0).isEmpty)
    }

    @Test("keys with escapes and duplicate keys are reported as written, each time")
    func escapesAndDuplicates() throws {
        let found = try reports(#"{"\u0061ps":1,"aps":2,"aps":null}"#, depth: 1)
        #expect(
            found == [
                Report(depth: 1, key: "aps", value: "1"), Report(depth: 1, key: "aps", value: "2"),
                Report(depth: 1, key: "aps", value: "null"),
            ])
    }

    /// Inputs meant to break a scanner: truncations, bad escapes, control bytes, deep nesting, stray bytes.
    static let hostile: [[UInt8]] = {
        var cases: [[UInt8]] = [
            "", " ", "{", "{\"", "{\"a\"", "{\"a\":", "{\"a\":1", "{\"a\":1,", "{\"a\":1,}", "{,}", "{\"a\" 1}",
            "{\"a\":{\"b\":[1,{\"c\":}]}}", "{\"a\":\"\\u12\"}", "{\"a\":\"\\q\"}", "{\"a\":\"x\ty\"}", "{\"a\":tru}",
            "{\"a\":01}", "{\"a\":1}x", "{\"a\":1}}", "[{\"a\":1},]", "{\"\\\"\":\"\\\\\"}", "{\"a\":-}", "{\"a\":1e+}",
            "{\"payload\":{\"aps\":{\"content-available\":1}}", "{\"a\":[[[[[[]]]]]]}",
        ].map { Array($0.utf8) }
        cases.append([0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D])  // {"<FF>":1}
        cases.append([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x7D])  // a UTF-8 surrogate
        cases.append(
            Array(String(repeating: #"{"a":"#, count: 70).utf8) + Array("1".utf8) + Array(repeating: 0x7D, count: 70))
        cases.append(
            Array(String(repeating: #"{"a":"#, count: 63).utf8) + Array("1".utf8) + Array(repeating: 0x7D, count: 63))
        cases.append(Array(repeating: UInt8(ascii: "["), count: 50_000))
        return cases
    }()

    @Test("on hostile input, the reporting scan gives the plain scan's verdict, error and offset", arguments: hostile)
    func sameVerdict(bytes: [UInt8]) {
        let scanner = JSONScanner(bytes)
        let plain = Result { () throws(JSONSyntaxError) in try scanner.scanDocument(in: 0..<bytes.count) }
        for depth in [1, 3, JSONScanner.maximumDepth + 1] {
            var reported = 0
            let reporting = Result { () throws(JSONSyntaxError) in
                try scanner.scanDocument(in: 0..<bytes.count, reportingMembersTo: depth) { memberDepth, _, _ in
                    #expect(memberDepth >= 1 && memberDepth <= depth)
                    reported += 1
                }
            }
            switch (plain, reporting) {
            case (.success(let a), .success(let b)): #expect(a == b)
            case (.failure(let a), .failure(let b)): #expect(a.offset == b.offset && a.message == b.message)
            default: Issue.record("verdicts differ at depth \(depth): \(plain) vs \(reporting)")
            }
        }
    }

    /// Records what a visitor is given, as `reports` records what the closure is given.
    struct Recorder: JSONMemberVisitor {
        var found: [Report] = []
        mutating func member(depth: Int, key: JSONScanner.Value, value: JSONScanner.Value, in scanner: JSONScanner) {
            let text = String(decoding: scanner.bytes[value.range], as: UTF8.self)
            found.append(Report(depth: depth, key: scanner.decodeString(key), value: text))
        }
    }

    @Test(
        "a visitor is given exactly the members the closure is, and the scan's verdict is the same",
        arguments: hostile
            + [#"{"a":{"b":{"c":1},"d":[{"e":2}]},"f":"x"}"#, #"{"\u0061":[1,{"b":true}],"a":null}"#].map {
                Array($0.utf8)
            })
    func visitorSameAsClosure(bytes: [UInt8]) {
        let scanner = JSONScanner(bytes)
        for depth in [0, 1, 2, 4] {
            var closureFound: [Report] = []
            let viaClosure = Result { () throws(JSONSyntaxError) in
                try scanner.scanDocument(in: 0..<bytes.count, reportingMembersTo: depth) { depth, key, value in
                    let text = String(decoding: bytes[value.range], as: UTF8.self)
                    closureFound.append(Report(depth: depth, key: scanner.decodeString(key), value: text))
                }
            }
            var recorder = Recorder()
            let viaVisitor = Result { () throws(JSONSyntaxError) in
                try scanner.scanDocument(in: 0..<bytes.count, reportingMembersTo: depth, to: &recorder)
            }
            #expect(recorder.found == closureFound)
            switch (viaClosure, viaVisitor) {
            case (.success(let a), .success(let b)): #expect(a == b)
            case (.failure(let a), .failure(let b)): #expect(a.offset == b.offset && a.message == b.message)
            default: Issue.record("verdicts differ at depth \(depth): \(viaClosure) vs \(viaVisitor)")
            }
        }
    }
}
