import Testing

@testable import APNSCore

@Suite("DecimalText")
struct DecimalTextTests {
    private func text<T: BinaryInteger>(_ value: T) -> String {
        var out: [UInt8] = Array("x".utf8)  // appends after what is there
        DecimalText.append(value, to: &out)
        return String(decoding: out.dropFirst(), as: UTF8.self)
    }

    @Test("every integer type, at the edges and at each power of ten, reads as String(value) does")
    func edges() {
        #expect(text(0) == "0" && text(Int.max) == String(Int.max) && text(Int.min) == String(Int.min))
        #expect(text(UInt64.max) == String(UInt64.max) && text(Int64.min) == String(Int64.min))
        #expect(text(Int32.min) == String(Int32.min) && text(UInt8(255)) == "255" && text(Int16(-7)) == "-7")
        var power: UInt64 = 1
        for _ in 0..<19 {
            for value in [power - 1, power, power + 1] { #expect(text(value) == String(value)) }
            #expect(text(-Int64(power)) == String(-Int64(power)))
            power *= 10
        }
    }

    @Test("random values of each width read as String(value) does")
    func random() {
        var generator = SplitMix64(seed: 3)
        for _ in 0..<5_000 {
            let bits = generator.next()
            let value = Int64(bitPattern: bits) >> (bits % 64)
            #expect(text(value) == String(value))
            #expect(text(UInt32(truncatingIfNeeded: bits)) == String(UInt32(truncatingIfNeeded: bits)))
        }
    }
}
