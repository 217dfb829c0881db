import Testing
@testable import APNSPipeline

@Suite("Dispatcher phase")
struct DispatcherPhaseTests {
    @Test("a run to completion: read, source dry, close the transport, closed, ended once")
    func completion() {
        var phase = DispatcherPhase()
        #expect(phase.readsSource && phase.sends && !phase.closingTransport)
        phase.inputExhausted()
        #expect(!phase.readsSource && phase.sends)
        let firstClose = phase.closeTransport()
        let secondClose = phase.closeTransport()
        #expect(firstClose && !secondClose, "the transport is asked to close once")
        #expect(!phase.sends && phase.closingTransport && !phase.transportClosed)
        phase.transportDidClose()
        #expect(phase.transportClosed)
        let ending = phase.end()
        let secondEnding = phase.end()
        #expect(ending == .completed)
        #expect(secondEnding == nil, "the end is reported once")
        #expect(phase.hasEnded && !phase.readsSource)
    }

    @Test("an early stop keeps reading (to write not_sent lines); an interrupt stops reading")
    func stops() {
        var early = DispatcherPhase()
        let stopped = early.stop(.stoppedEarly("BadTopic"))
        #expect(stopped && early.readsSource && !early.sends)
        let interruptedToo = early.stop(.interrupted)
        #expect(!interruptedToo, "the first cause wins")
        #expect(early.stopCause == .stoppedEarly("BadTopic"))

        var interrupted = DispatcherPhase()
        _ = interrupted.stop(.interrupted)
        #expect(!interrupted.readsSource && interrupted.inputOpen)
        _ = interrupted.closeTransport()
        interrupted.transportDidClose()
        let ending = interrupted.end()
        #expect(ending == .interrupted)
    }

    @Test("a stop while the transport closes at the end of the work still names the run's ending")
    func stopWhileClosing() {
        var phase = DispatcherPhase()
        phase.inputExhausted()
        _ = phase.closeTransport()
        let stopped = phase.stop(.interrupted)
        #expect(stopped)
        phase.transportDidClose()
        let ending = phase.end()
        #expect(ending == .interrupted)
    }
}
