import Testing

@testable import APNSCore

@Suite("ByteSearch")
struct ByteSearchTests {
    @Test("finds the first match like firstIndex(of:), in any range, at every alignment, for every byte value")
    func agreesWithFirstIndex() {
        var generator = SplitMix64(seed: 11)
        for round in 0..<3_000 {
            let count = Int(generator.next() % 40)
            // Few distinct values, so matches are common, in varying places; every byte value is a needle somewhere.
            let needle = UInt8(truncatingIfNeeded: round)
            let bytes = (0..<count).map { _ in
                let random = generator.next()
                return random % 7 == 0 ? needle : UInt8(truncatingIfNeeded: random >> 8) | 1 &+ needle
            }
            let lower = count == 0 ? 0 : Int(generator.next() % UInt64(count + 1))
            let upper = lower + Int(generator.next() % UInt64(count - lower + 1))
            let expected = bytes[lower..<upper].firstIndex(of: needle)
            #expect(
                ByteSearch.firstIndex(of: needle, in: bytes, range: lower..<upper) == expected,
                "\(needle) in \(bytes)[\(lower)..<\(upper)]")
        }
    }

    @Test("a match just past the range is not found; one at each place of a word is")
    func rangeEdges() {
        for place in 0..<17 {
            var bytes = [UInt8](repeating: 0x61, count: 17)
            bytes[place] = 0x0A
            #expect(ByteSearch.firstIndex(of: 0x0A, in: bytes, range: 0..<17) == place)
            #expect(ByteSearch.firstIndex(of: 0x0A, in: bytes, range: 0..<place) == nil)
            #expect(ByteSearch.firstIndex(of: 0x0A, in: bytes, range: min(place + 1, 17)..<17) == nil)
        }
    }
}

@Suite("ByteComparison")
struct ByteComparisonTests {
    @Test("equal exactly when the bytes are: every length to 40, a difference at every place, slices at any offset")
    func agreesWithEquality() {
        for length in 0...40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 7) }
            let padded = [0xAA, 0xBB, 0xCC] + bytes + [0xDD]
            let slice = padded[3..<(3 + length)]  // same bytes, not at the start of its array
            let same = ByteComparison.equal(bytes.span.bytes, slice.span.bytes)
            let longer = ByteComparison.equal(bytes.span.bytes, padded[3..<(4 + length)].span.bytes)
            #expect(same && !longer)
            for place in 0..<length {
                var changed = bytes
                changed[place] ^= 0x01
                let equal = ByteComparison.equal(changed.span.bytes, slice.span.bytes)
                #expect(!equal, "length \(length), place \(place)")
            }
        }
    }
}
