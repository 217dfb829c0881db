import Testing

@testable import APNSHTTP2
@testable import APNSTransport

@Suite("HTTP2StreamSlots")
struct HTTP2StreamSlotsTests {
    @Test("before the peer's SETTINGS the assumed limit applies")
    func assumedLimit() {
        var slots = HTTP2StreamSlots(localLimit: 1000)
        #expect(slots.limit == 1)
        #expect(slots.available == 1)
        slots.streamOpened()
        #expect(slots.available == 0)
        #expect(!slots.hasReceivedPeerSettings)
    }

    @Test("the peer raises, lowers, and our own ceiling caps")
    func followsPeer() {
        var slots = HTTP2StreamSlots(localLimit: 500)
        slots.streamOpened()
        // the first SETTINGS: reported though unchanged
        #expect(slots.peerSettingsReceived(maxConcurrentStreams: 1) == 1)
        #expect(slots.hasReceivedPeerSettings)
        #expect(slots.peerSettingsReceived(maxConcurrentStreams: 1) == nil)  // later, unchanged: nothing to report
        #expect(slots.peerSettingsReceived(maxConcurrentStreams: 1000) == 500)
        #expect(slots.peerLimit == 1000)
        #expect(slots.available == 499)
        for _ in 0..<99 { slots.streamOpened() }
        #expect(slots.peerSettingsReceived(maxConcurrentStreams: 10) == 10)
        #expect(slots.available == 0)  // 100 open over a limit of 10: wait
        for _ in 0..<95 { slots.streamClosed() }
        #expect(slots.open == 5)
        #expect(slots.available == 5)
        #expect(slots.peerSettingsReceived(maxConcurrentStreams: nil) == nil)  // a later SETTINGS without it: unchanged
        #expect(slots.limit == 10)
    }

    @Test("a first SETTINGS frame without the limit means unlimited, capped by ours")
    func unlimited() {
        var slots = HTTP2StreamSlots(localLimit: 300, assumedPeerLimit: 1)
        #expect(slots.peerSettingsReceived(maxConcurrentStreams: nil) == 300)
        #expect(slots.peerLimit == Int(UInt32.max))
        #expect(slots.available == 300)
    }

    @Test("zero from the peer stops new streams; GOAWAY stops them for good")
    func stop() {
        var slots = HTTP2StreamSlots(localLimit: 100, assumedPeerLimit: 100)
        #expect(slots.peerSettingsReceived(maxConcurrentStreams: 0) == 0)
        #expect(slots.available == 0)
        #expect(slots.peerSettingsReceived(maxConcurrentStreams: 50) == 50)
        #expect(slots.available == 50)
        slots.stopAccepting()
        #expect(slots.available == 0)
        #expect(slots.peerSettingsReceived(maxConcurrentStreams: 80) == 80)
        #expect(slots.available == 0)
        #expect(!slots.isAcceptingStreams)
    }
}
