import Testing

@testable import APNSCore

/// `ContentAvailableOnlyCheck` must answer exactly as `PayloadRules.isContentAvailableOnly` (the reference, which
/// looks the members up again after the scan), on chosen and on generated payloads.
@Suite("content-available-only check during the scan")
struct ContentAvailableOnlyCheckTests {
    static let chosen: [String] = [
        #"{"aps":{"content-available":1}}"#, #"{"aps":{"content-available":0}}"#,
        #"{"aps":{"\u0063ontent-available":1}}"#,
        #"{"\u0061ps":{"content-available":1}}"#, #"{"aps":{"content-available":1,"alert":"x"}}"#, #"{"aps":{}}"#,
        #"{"aps":{"alert":"x"}}"#, #"{"aps":[{"content-available":1}]}"#, #"{"aps":"content-available"}"#, "{}",
        #"{"aps":{"content-available":1},"aps":{"alert":"x"}}"#,
        #"{"aps":{"alert":"x"},"aps":{"content-available":1}}"#,
        #"{"aps":{"content-available":1},"aps":5}"#, #"{"aps":{"content-available":{"content-available":1}}}"#,
        #"{"aps":{"content-available":1,"content-available":1}}"#, #"{"x":{"content-available":1}}"#,
        #"{"x":{"aps":{"content-available":1}}}"#, #"{"list":[{"aps":{"content-available":1}}]}"#,
        #"{"o":{"k":1},"aps":{"content-available":1},"p":{"a":1,"b":2}}"#,
        #"{"aps":{"k":{"a":1}},"x":{"content-available":1}}"#,
        #"{"aps":{"content-available":1},"list":[{"a":1},{"b":2}]}"#, #"{"aps":{"alert":{"content-available":1}}}"#,
    ]

    /// The reference answer and the check's, for `payload` scanned on its own.
    private func answers(_ payload: [UInt8]) throws -> (reference: Bool, check: Bool) {
        let scanner = JSONScanner(payload)
        var check = ContentAvailableOnlyCheck(payloadDepth: 1)
        let object = try scanner.scanDocument(in: 0..<payload.count, reportingMembersTo: check.reportedDepth) {
            depth, key, value in
            check.member(depth: depth, key: key, value: value, in: scanner)
        }
        return (PayloadRules.isContentAvailableOnly(scanner, object: object), check.isContentAvailableOnly)
    }

    @Test("chosen payloads: decoys in arrays, nested objects, escaped keys, repeated aps", arguments: chosen)
    func chosenPayloads(payload: String) throws {
        let (reference, check) = try answers(Array(payload.utf8))
        #expect(reference == check, "\(payload)")
    }

    @Test("the reference says yes where it should (so the comparison is not vacuous)")
    func referenceSanity() throws {
        #expect(try answers(Array(#"{"aps":{"content-available":1}}"#.utf8)).reference)
        #expect(try !answers(Array(#"{"aps":{"alert":"x"}}"#.utf8)).reference)
    }

    @Test("2,000 generated payloads: the check agrees with the reference")
    func generated() throws {
        var generator = RandomJSON(seed: 12)
        var yes = 0
        for _ in 0..<2_000 {
            let payload = generator.object(depth: 0)
            let (reference, check) = try answers(Array(payload.utf8))
            #expect(reference == check, "\(payload)")
            if reference { yes += 1 }
        }
        #expect(yes > 20, "the generator must produce content-available-only payloads too")
    }
}

/// Small random JSON objects whose keys are mostly the ones the check looks at (seeded, so runs repeat).
struct RandomJSON {
    private var state: UInt64
    private static let keys = [#""aps""#, #""content-available""#, #""alert""#, #""\u0061ps""#, #""x""#, #""payload""#]

    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }

    mutating func next(_ bound: Int) -> Int {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return Int(state % UInt64(bound))
    }

    mutating func object(depth: Int) -> String {
        let count = depth == 0 ? 1 + next(3) : next(3)
        var members: [String] = []
        for _ in 0..<count {
            let key = Self.keys[next(Self.keys.count)]
            members.append(key + ":" + value(depth: depth + 1))
        }
        // Often the exact content-available-only shape, so the answer is yes often enough.
        if depth == 0, next(3) == 0 { members.insert(#""aps":{"content-available":1}"#, at: next(members.count + 1)) }
        return "{" + members.joined(separator: next(2) == 0 ? "," : " , ") + "}"
    }

    mutating func value(depth: Int) -> String {
        guard depth < 5 else { return "1" }
        switch next(6) {
        case 0, 1: return object(depth: depth)
        case 2: return "[" + (0..<next(3)).map { _ in value(depth: depth + 1) }.joined(separator: ",") + "]"
        case 3: return #""s""#
        case 4: return "null"
        default: return String(next(10))
        }
    }
}
