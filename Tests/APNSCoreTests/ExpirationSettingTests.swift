import APNSCore
import Testing

/// `ExpirationSetting`: epoch seconds, `0`, or a duration resolved at the first send.
@Suite("ExpirationSetting")
struct ExpirationSettingTests {
    @Test("digits are epoch seconds, 0 included")
    func absolute() throws {
        #expect(try ExpirationSetting(parsing: "0") == .immediately)
        #expect(try ExpirationSetting(parsing: "1767225600") == .absolute(try Expiration(epochSeconds: 1_767_225_600)))
        #expect(try ExpirationSetting(parsing: "1767225600").epochSeconds == 1_767_225_600)
    }

    @Test(
        "durations are relative: 30m, 24h, 7d, 1h30m",
        arguments: [
            ("30m", 1_800), ("24h", 86_400), ("7d", 604_800), ("1h30m", 5_400), ("90s", 90),
        ] as [(String, Int64)])
    func relative(text: String, seconds: Int64) throws {
        let setting = try ExpirationSetting(parsing: text)
        #expect(setting.needsResolving)
        #expect(setting.epochSeconds == nil, "no epoch before the first send")
        #expect(setting.duration?.seconds == seconds)
    }

    @Test(
        "anything else is refused, naming the accepted forms",
        arguments: [
            "soon", "", "-1", "1.5", "0s", "1h ", " 1h", "30x", "4294967296", "99999999999999999999", "11y",
        ])
    func refused(text: String) {
        do {
            _ = try ExpirationSetting(parsing: text)
            Issue.record("'\(text)' was accepted")
        } catch {
            #expect(error.code == .expirationInvalid)
            #expect(error.detail.contains("epoch seconds"), "\(error.detail)")
            if !text.allSatisfy(\.isNumber) || text.isEmpty {
                #expect(error.detail.contains("30m, 24h, 7d"), "\(error.detail)")
            }
        }
    }

    @Test("resolving adds the duration to the send's epoch, once; an absolute setting stays as written")
    func resolving() throws {
        let relative = try ExpirationSetting(parsing: "1h")
        let resolved = relative.resolved(atEpoch: 1_800_000_000)
        #expect(resolved == .resolved(epoch: 1_800_003_600, after: 3_600))
        #expect(resolved.epochSeconds == 1_800_003_600)
        #expect(!resolved.needsResolving)
        #expect(resolved.resolved(atEpoch: 1_900_000_000) == resolved, "a second send keeps the first value")
        #expect(resolved.duration == relative.duration, "the duration it came from stays known")
        let absolute = try ExpirationSetting(parsing: "42")
        #expect(absolute.resolved(atEpoch: 1_800_000_000) == absolute)
        let late = relative.resolved(atEpoch: Expiration.maximumEpochSeconds)
        #expect(late.epochSeconds == Expiration.maximumEpochSeconds, "clamped to the header's largest epoch")
    }

    @Test("description: the epoch once there is one, else the duration in its shortest form")
    func description() throws {
        #expect(try ExpirationSetting(parsing: "90m").description == "1h30m")
        #expect(try ExpirationSetting(parsing: "90m").resolved(atEpoch: 100).description == "5500")
        #expect(try ExpirationSetting(parsing: "0").description == "0")
    }

    @Test("as small as the bare epoch it replaced")
    func size() {
        #expect(MemoryLayout<ExpirationSetting?>.size <= MemoryLayout<Expiration?>.size)
        #expect(MemoryLayout<PushNotification>.size <= 80, "the dispatcher's PendingSend must stay within 128 bytes")
    }
}
