import APNSCore
import Testing

@testable import APNSTransport

@Suite("MachineActions")
struct MachineActionsTests {
    @Test("keeps the order it was given, however it grows")
    func keepsOrder() {
        var generator = SplitMix64(seed: 5)
        for _ in 0..<200 {
            var actions = MachineActions<Int>.none
            var expected: [Int] = []
            for _ in 0..<Int(generator.next() % 7) {
                let value = Int(generator.next() % 100)
                if generator.next() % 2 == 0 {
                    actions.append(value)
                    expected.append(value)
                } else {
                    actions.append(contentsOf: [value, value + 1])
                    expected += [value, value + 1]
                }
            }
            #expect(Array(actions) == expected)
            #expect(actions.array == expected)
            #expect(actions.count == expected.count)
            #expect(actions.isEmpty == expected.isEmpty)
            #expect(actions == MachineActions(expected))
        }
    }

    @Test("none, one and several compare by their actions")
    func comparesByActions() {
        #expect(MachineActions<Int>.none == [])
        #expect(MachineActions<Int>(3) == [3])
        #expect(MachineActions<Int>(3) != [3, 3])
        #expect(MachineActions<Int>(3) + MachineActions<Int>(4) == [3, 4])
        #expect((MachineActions<Int>.none + []).isEmpty)
        #expect(Array(MachineActions<Int>.none).isEmpty)
        #expect("\(MachineActions<Int>([1, 2]))" == "[1, 2]")
    }
}
