import APNSCore
import Testing

@testable import APNSTransport

/// `OpenRequestTable` against a Dictionary doing the same random work: inserts, removals, lookups, growth.
@Suite("Open request table")
struct OpenRequestTableTests {
    @Test("random inserts and removals agree with a dictionary, through growth and backward-shift deletes")
    func agreesWithDictionary() {
        var generator = SplitMix64(seed: 0x5EED)  // deterministic, so a failure replays
        for round in 0..<40 {
            // Rounds 20 and up keep the table at its first 16 slots, nearly half full, checking every tag after each
            // step: entries wrap past the end often there.
            let small = round >= 20
            var table = OpenRequestTable()
            var model: [UInt64: Int] = [:]
            // Few distinct tags in some rounds (many collisions and re-inserts), sequential or wide in others.
            let spread: UInt64 = round % 3 == 0 ? 64 : (round % 3 == 1 ? 1 << 40 : UInt64.max)
            for step in 0..<3000 {
                let tag = round % 2 == 0 ? generator.next() % spread : UInt64(step / 2) &* 2 &+ generator.next() % 3
                let inserts = generator.next() % 3 < 2 && model.count < (small ? 7 : 400)
                switch inserts {
                case true:
                    let serial = Int(generator.next() % 1000)
                    table.insert(tag, tokenSerial: serial)
                    model[tag] = serial
                default:
                    #expect(table.remove(tag) == model.removeValue(forKey: tag), "round \(round) step \(step)")
                }
                #expect(table.count == model.count)
                let probe = generator.next() % spread
                #expect(table.tokenSerial(of: probe) == model[probe])
                if small || step % 500 == 0 {
                    for (key, value) in model { #expect(table.tokenSerial(of: key) == value) }
                }
            }
            let open = table.removeAllSorted()
            #expect(open.map(\.tag) == model.keys.sorted())
            #expect(open.map(\.tokenSerial) == model.keys.sorted().map { model[$0] ?? -1 })
            #expect(table.isEmpty && table.tokenSerial(of: open.first?.tag ?? 0) == nil)
        }
    }
}
