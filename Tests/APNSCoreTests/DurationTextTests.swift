import Testing

@testable import APNSCore

@Suite("DurationText")
struct DurationTextTests {
    @Test("each unit and groups of them, largest first, read as their seconds")
    func reads() {
        #expect(DurationText(parsing: "90s")?.seconds == 90)
        #expect(DurationText(parsing: "30m")?.seconds == 1_800)
        #expect(DurationText(parsing: "24h")?.seconds == 86_400)
        #expect(DurationText(parsing: "7d")?.seconds == 604_800)
        #expect(DurationText(parsing: "1h30m")?.seconds == 5_400)
        let mixed: Int64 = 2 * 86_400 + 12 * 3_600 + 5 * 60 + 7
        #expect(DurationText(parsing: "2d12h5m7s")?.seconds == mixed)
        #expect(DurationText(parsing: "0h1s")?.seconds == 1)
    }

    @Test(
        "digits alone, zero, unknown or repeated units, units out of order, signs, blanks and overlong values are refused"
    )
    func refuses() {
        for text in [
            "", "0", "3600", "0s", "0d0h", "h", "5", "5x", "5H", "1m1h", "1h1h", "-5m", "+5m", " 5m", "5m ", "5 m",
            "1.5h", "3661d", "999999999999999d", "1h30",
        ] {
            #expect(DurationText(parsing: text) == nil, "\(text)")
        }
        let longest: Int64 = 3_660 * 86_400
        #expect(DurationText(parsing: "3660d")?.seconds == longest)
    }

    @Test("the description reads back to the same length, in the fewest groups")
    func roundTrip() {
        #expect(DurationText(seconds: 5_400)?.description == "1h30m")
        #expect(DurationText(seconds: 86_401)?.description == "1d1s")
        var generator = SplitMix64(seed: 11)
        for _ in 0..<2_000 {
            let seconds = Int64(generator.next() % UInt64(DurationText.maximumSeconds)) + 1
            let duration = DurationText(seconds: seconds)
            #expect(duration.flatMap { DurationText(parsing: $0.description) } == duration)
        }
    }
}
