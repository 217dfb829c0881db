import APNSPipeline

/// Keeps the run's timeline while the progress callback feeds it.
final class TimelineRecorder: @unchecked Sendable {
    // @unchecked: fed only from the event-loop thread that runs the campaign, read after it returns.
    private(set) var timeline: CampaignTimeline

    init(startedAt: Double, label: String) {
        timeline = CampaignTimeline(startedAt: startedAt)
        timeline.label = label
    }

    func record(_ summary: CampaignSummary, inFlight: Int, window: Int? = nil) {
        timeline.record(summary, inFlight: inFlight, window: window)
    }
}
