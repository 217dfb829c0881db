import Testing

@testable import APNSCore

@Suite("OutcomePolicy")
struct OutcomePolicyTests {
    /// Every row of APNS.md's response table: status, reason, what a bulk sender does.
    static let table: [(Int, APNSReason, SendAction)] = [
        (400, .badDeviceToken, .prune),
        (400, .deviceTokenNotForTopic, .prune),
        (400, .badCollapseID, .reject(campaignWide: false)),
        (400, .badExpirationDate, .reject(campaignWide: true)),
        (400, .badMessageID, .reject(campaignWide: false)),
        (400, .badPriority, .reject(campaignWide: true)),
        (400, .badTopic, .reject(campaignWide: true)),
        (400, .duplicateHeaders, .reject(campaignWide: true)),
        (400, .invalidPushType, .reject(campaignWide: true)),
        (400, .missingDeviceToken, .reject(campaignWide: true)),
        (400, .missingTopic, .reject(campaignWide: true)),
        (400, .payloadEmpty, .reject(campaignWide: false)),
        (400, .topicDisallowed, .reject(campaignWide: true)),
        (400, .idleTimeout, .retry(.atOnce)),
        (403, .expiredProviderToken, .retry(.afterResigningToken)),
        (403, .invalidProviderToken, .stop(.credentials)),
        (403, .missingProviderToken, .stop(.credentials)),
        (403, .badCertificate, .stop(.credentials)),
        (403, .badCertificateEnvironment, .stop(.credentials)),
        (403, .forbidden, .stop(.credentials)),
        (403, .unrelatedKeyIDInToken, .stop(.credentials)),
        (403, .badEnvironmentKeyIDInToken, .stop(.credentials)),
        (404, .badPath, .stop(.senderBug)),
        (405, .methodNotAllowed, .stop(.senderBug)),
        (410, .unregistered, .prune),
        (410, .expiredToken, .prune),
        (413, .payloadTooLarge, .reject(campaignWide: false)),
        (429, .tooManyRequests, .retry(.afterBackoff)),
        (429, .tooManyProviderTokenUpdates, .retry(.afterBackoff)),
        (500, .internalServerError, .retry(.afterBackoff)),
        (503, .serviceUnavailable, .retry(.afterBackoff)),
        (503, .shutdown, .retry(.afterBackoff)),
    ]

    @Test("the table covers every documented reason exactly once")
    func coverage() {
        let reasons = Self.table.map(\.1)
        #expect(Set(reasons) == Set(APNSReason.documented))
        #expect(reasons.count == APNSReason.documented.count)
    }

    @Test("every row maps to its action, with the status APNs pairs it with")
    func rows() {
        for (status, reason, expected) in Self.table {
            #expect(reason.status == status, "\(reason)")
            let action = OutcomePolicy.action(
                for: .answered(PushAnswer(status: status, reason: reason, timestamp: nil)))
            #expect(action == expected, "\(status) \(reason)")
        }
    }

    @Test("reasons round-trip through their spelling; anything else is unknown")
    func spelling() {
        for reason in APNSReason.documented {
            #expect(APNSReason(rawValue: reason.rawValue) == reason)
        }
        #expect(APNSReason(rawValue: "badDeviceToken") == .unknown("badDeviceToken"))
        #expect(APNSReason(rawValue: "NewReason2027") == .unknown("NewReason2027"))
    }

    @Test("200 is delivered whatever the body says")
    func delivered() {
        #expect(
            OutcomePolicy.action(for: .answered(PushAnswer(status: 200, reason: nil, timestamp: nil))) == .delivered)
        #expect(
            OutcomePolicy.action(for: .answered(PushAnswer(status: 200, reason: .unregistered, timestamp: 1)))
                == .delivered)
    }

    @Test(
        "unknown reasons fall back on the status class; a status APNs never sends is the server's failure",
        arguments: [
            (400, SendAction.reject(campaignWide: true)), (401, .inDoubt), (403, .stop(.credentials)),
            (404, .stop(.senderBug)), (405, .stop(.senderBug)), (410, .prune), (413, .reject(campaignWide: true)),
            (429, .retry(.afterBackoff)), (500, .retry(.afterBackoff)), (502, .retry(.afterBackoff)),
            (503, .retry(.afterBackoff)), (204, .inDoubt), (999, .inDoubt), (302, .inDoubt), (0, .inDoubt),
        ])
    func fallback(status: Int, expected: SendAction) {
        #expect(
            OutcomePolicy.action(for: .answered(PushAnswer(status: status, reason: .unknown("Novel"), timestamp: nil)))
                == expected)
        #expect(
            OutcomePolicy.action(for: .answered(PushAnswer(status: status, reason: nil, timestamp: nil))) == expected)
    }

    @Test("the statuses APNs answers with are exactly those docs/APNS.md lists")
    func apnsStatuses() {
        let documented: Set = [200, 400, 403, 404, 405, 410, 413, 429, 500, 503]
        for status in -1...1000 {
            #expect(OutcomePolicy.isAPNSStatus(status) == documented.contains(status), "status \(status)")
        }
    }

    @Test("a status APNs never sends decides alone: its reason is ignored, so a broken server cannot prune a token")
    func unknownStatusIgnoresReason() {
        for reason in [APNSReason.badDeviceToken, .unregistered, .badTopic, .invalidProviderToken] {
            #expect(
                OutcomePolicy.action(for: .answered(PushAnswer(status: 999, reason: reason, timestamp: 1))) == .inDoubt)
            #expect(
                OutcomePolicy.action(for: .answered(PushAnswer(status: 599, reason: reason))) == .retry(.afterBackoff))
        }
    }

    @Test("transport failures: unprocessed is resent, lost answers are in doubt")
    func transport() {
        #expect(OutcomePolicy.action(for: .failed(.refusedStream)) == .retry(.immediately))
        #expect(OutcomePolicy.action(for: .failed(.unprocessedAfterGoaway)) == .retry(.immediately))
        #expect(OutcomePolicy.action(for: .failed(.notSent("connect refused"))) == .retry(.immediately))
        #expect(OutcomePolicy.action(for: .failed(.answerLost("GOAWAY"))) == .inDoubt)
        #expect(OutcomePolicy.action(for: .failed(.answerLost("timeout"))) == .inDoubt)
    }

    @Test("error bodies parse into reason and timestamp")
    func answers() {
        let gone = PushAnswer(
            status: 410, apnsID: "x", apnsUniqueID: nil,
            body: Array(#"{"reason":"Unregistered","timestamp":1767225600123}"#.utf8))
        #expect(gone.reason == .unregistered)
        #expect(gone.timestamp == 1_767_225_600_123)
        #expect(OutcomePolicy.action(for: .answered(gone)) == .prune)
        let odd = PushAnswer(status: 500, apnsID: nil, apnsUniqueID: nil, body: Array("<html>".utf8))
        #expect(odd.reason == nil)
        #expect(OutcomePolicy.action(for: .answered(odd)) == .retry(.afterBackoff))
    }

    @Test("replay takes exactly the retryable outcomes")
    func replayable() {
        let replayed = RecordOutcome.allCases.filter(\.isReplayable)
        #expect(Set(replayed) == [.retryable, .notSent, .inDoubt])
    }

    @Test("outcomes hash and compare by case: seven distinct keys, each equal only to itself")
    func outcomeHashing() {
        let all = RecordOutcome.allCases
        #expect(Set(all).count == all.count)
        #expect(all.map(\.caseIndex) == Array(all.indices), "caseIndex is not the position in allCases")
        var counts: [RecordOutcome: Int] = [:]
        for (index, outcome) in all.enumerated() { counts[outcome, default: 0] += index + 1 }
        for (index, outcome) in all.enumerated() {
            #expect(counts[outcome] == index + 1)
            #expect(RecordOutcome(rawValue: outcome.rawValue) == outcome)
            #expect(all.filter { $0 == outcome }.count == 1)
        }
    }
}
