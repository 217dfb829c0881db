import APNSCore
import Foundation
import Testing

@testable import APNSPipeline

/// `validate`'s duplicate counter, on its own thread or not, counts exactly what one filter inserting one pair at a
/// time counts, across many hand-overs, and a scratch-file failure on its thread reaches the reading thread
/// instead of hanging it.
@Suite("Duplicate counter, on its own thread or not")
struct DuplicateCounterTests {
    typealias Support = PipelineTestSupport

    @Test(
        "the same count as one filter inserting in order: copies in one batch and across batches, several topics, colliding fingerprints, pairs given as notifications or as a record's bytes",
        arguments: [0, 2, 24], [true, false])
    func sameCountAsOneFilter(fingerprintBits: Int, onItsOwnThread: Bool) throws {
        let directory = try Support.temporaryDirectory().path
        let topics = try ["com.example.app", "com.example.other", "com.example.app.voip"].map {
            try Topic(validating: $0)
        }
        // Without a fingerprint every lookup reads keys back: fewer pairs keep that case quick.
        let distinct = fingerprintBits == 0 ? 300 : 3_000
        let pairs = DuplicateCounter.batchSize * 2 + 77
        let tokens = try (0..<distinct).map { try DeviceToken(parsing: Support.token($0)) }
        var counter = DuplicateCounter(
            scratchDirectory: directory, onItsOwnThread: onItsOwnThread, fingerprintBits: fingerprintBits)
        var filter = DuplicateFilter(scratchDirectory: directory, fingerprintBits: fingerprintBits)
        var expected = 0
        for index in 0..<pairs {
            let choice = StableHash.mix(UInt64(index) &+ UInt64(fingerprintBits) << 32)  // reproducible, spread
            let notification = PushNotification(
                token: tokens[Int(choice % UInt64(distinct))], topic: topics[Int(choice >> 32 % 3)],
                pushType: .alert, payload: [])
            if index % 2 == 0 {
                try counter.add(notification, progress: nil)
            } else {
                // As `CampaignReader.checkRecords` hands most pairs over: the token's digits inside a record's bytes.
                let line = Array(#"{"token":""#.utf8) + Array(notification.token.hex.utf8) + Array(#""}"#.utf8)
                let hex = 10..<(10 + notification.token.hex.utf8.count)
                try counter.add(tokenBytes: line, hex: hex, topic: notification.topic, progress: nil)
            }
            if try !filter.insert(notification) { expected += 1 }
        }
        #expect(expected > 0 && expected < pairs)
        #expect(try counter.finish(progress: nil) == expected)
    }

    @Test(
        "a scratch directory that cannot be written fails the count, naming it: thrown by add, a later hand-over or finish",
        arguments: [true, false])
    func scratchFailure(onItsOwnThread: Bool) throws {
        let directory = try Support.temporaryDirectory().path + "/missing"
        var counter = DuplicateCounter(scratchDirectory: directory, onItsOwnThread: onItsOwnThread)
        let notification = PushNotification(
            token: try DeviceToken(parsing: Support.token(1)), topic: Support.defaultTopic, pushType: .alert,
            payload: [])
        var failure: PipelineError?
        do {
            // Enough hand-overs to fill the queue several times over: none of them may block for good.
            for _ in 0..<(DuplicateCounter.batchSize * 40) { try counter.add(notification, progress: nil) }
            _ = try counter.finish(progress: nil)
        } catch {
            failure = error
        }
        #expect(
            failure?.kind == .openFailed && failure?.detail.contains(directory) == true,
            "\(String(describing: failure))")
    }

    @Test("a counter dropped without finish ends its thread")
    func droppedCounter() throws {
        let directory = try Support.temporaryDirectory().path
        for _ in 0..<20 {
            var counter = DuplicateCounter(scratchDirectory: directory, onItsOwnThread: true)
            try counter.add(
                PushNotification(
                    token: try DeviceToken(parsing: Support.token(1)), topic: Support.defaultTopic, pushType: .alert,
                    payload: []), progress: nil)
        }
        // Each dropped counter's thread has ended: a fresh one still counts.
        var counter = DuplicateCounter(scratchDirectory: directory, onItsOwnThread: true)
        let notification = PushNotification(
            token: try DeviceToken(parsing: Support.token(2)), topic: Support.defaultTopic, pushType: .alert,
            payload: [])
        try counter.add(notification, progress: nil)
        try counter.add(notification, progress: nil)
        #expect(try counter.finish(progress: nil) == 1)
    }
}

extension DuplicateCounter {
    /// Counts a notification's pair as `CampaignReader.checkRecords` hands over a parsed token's: its digits alone.
    mutating func add(_ notification: PushNotification, progress: ReadProgress?) throws(PipelineError) {
        let hex = Array(notification.token.hex.utf8)
        try add(tokenBytes: hex, hex: hex.indices, topic: notification.topic, progress: progress)
    }
}
