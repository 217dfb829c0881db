import APNSCore
import Foundation
import Testing

@testable import APNSPipeline

@Suite("Streaming with bounded memory")
struct StreamingTests {
    typealias Support = PipelineTestSupport

    /// A generated campaign: `count` lines, every 1000th invalid, payload sizes varying.
    private func generate(_ count: Int, csv: Bool) -> [UInt8] {
        let tokens = (0..<64).map { Array(Support.token($0).utf8.dropLast(6)) }
        var out: [UInt8] = []
        out.reserveCapacity(count * 140)
        if csv { out += Array("token,n,name\n".utf8) }
        for index in 0..<count {
            var suffix = Array(String(index % 1_000_000, radix: 16).utf8)
            suffix = Array(repeating: UInt8(ascii: "0"), count: 6 - suffix.count) + suffix
            let token = index % 1000 == 999 ? Array("bad".utf8) : tokens[index % 64] + suffix
            if csv {
                out += token + Array(",\(index),\"Name \"\"\(index % 7)\"\"\"\n".utf8)
            } else {
                out +=
                    Array(#"{"token":""#.utf8) + token
                    + Array(
                        #"","payload":{"aps":{"alert":"Message \#(index)\#(String(repeating: "x", count: index % 50))"}}}"#
                            .utf8) + [0x0A]
            }
        }
        return out
    }

    @Test("200k NDJSON lines: every record read, the reader's buffer never above its bound")
    func ndjson() throws {
        let directory = try Support.temporaryDirectory()
        let path = try Support.write(generate(200_000, csv: false), to: "big.ndjson", in: directory)
        let reader = CampaignReader(
            inputs: [CampaignInput(path: path)], options: CampaignReaderOptions(defaults: Support.defaults))
        let bound = CampaignReaderOptions.defaultMaximumRecordLength + 2 + LineReader.defaultChunkSize
        var valid = 0
        var invalid = 0
        var lastLine = 0
        var outOfOrder = 0
        var largestBuffer = 0
        while let record = try reader.nextRecord() {
            if record.notification != nil { valid += 1 } else { invalid += 1 }
            if record.key.line != lastLine + 1 { outOfOrder += 1 }
            lastLine = record.key.line
            largestBuffer = max(largestBuffer, reader.currentBufferCapacity)
        }
        #expect(valid == 199_800 && invalid == 200)
        #expect(outOfOrder == 0 && lastLine == 200_000)
        #expect(largestBuffer == bound)
    }

    @Test("50k CSV rows with quoted cells: every record read, buffers bounded")
    func csv() throws {
        let directory = try Support.temporaryDirectory()
        let path = try Support.write(generate(50_000, csv: true), to: "big.csv", in: directory)
        var options = CampaignReaderOptions(defaults: Support.defaults)
        options.template = try PayloadTemplate(bytes: Array(#"{"aps":{"alert":"Hi {{name}}","badge":{{n}}}}"#.utf8))
        let reader = CampaignReader(inputs: [CampaignInput(path: path)], options: options)
        var valid = 0
        var largestBuffer = 0
        var lastLine = 1
        var outOfOrder = 0
        while let record = try reader.nextRecord() {
            if record.notification != nil { valid += 1 }
            if record.key.line != lastLine + 1 { outOfOrder += 1 }
            lastLine = record.key.line
            largestBuffer = max(largestBuffer, reader.currentBufferCapacity)
        }
        #expect(valid == 49_950)
        #expect(outOfOrder == 0 && lastLine == 50_001)
        #expect(largestBuffer <= LineReader.defaultChunkSize + 2 * CampaignReaderOptions.defaultMaximumRecordLength)
    }
}
