import APNSCore

/// Holds back the answers that call a device token bad (`BadDeviceToken`, `DeviceTokenNotForTopic`) until a token
/// of the same topic has been accepted in this run, so that a campaign sent to the wrong environment, or with the
/// tokens of another app, never lists its live tokens for deletion (docs/APNS.md, "A token rejected before any
/// is accepted").
///
/// APNs answers `BadDeviceToken` both for a token that is invalid and for one of the other environment
/// (development tokens sent to production, or the reverse), and `DeviceTokenNotForTopic` for every token of
/// another app: when no token of a topic is accepted, the endpoint or the topic is what is wrong, not the tokens.
/// A topic is confirmed by an answer that could only come from the right environment and app: a 200, or a 410
/// (`Unregistered`, `ExpiredToken`: the token was this app's, in this environment).
///
/// The rule: such a rejection for a confirmed topic is a dead token at once. For an unconfirmed topic it is held;
/// the first confirmation releases what was held as dead tokens. `limit` held for one topic with none confirmed
/// stop the campaign (`stopReason`). At the end of a run, what is still held is settled by `settle`.
struct TokenRejectionCheck {
    /// What becomes of one rejection.
    enum Verdict {
        /// The topic is confirmed: the record is a dead token now (the caller writes its line as usual).
        case prune
        /// Held until the topic is confirmed or the run ends.
        case held
        /// Held, and the topic has reached the limit with none accepted: the campaign stops for this reason.
        case stop(String)
        /// The campaign is stopping: the rejection is not held but ends as `Held.unconfirmed` says (or, after
        /// an interrupt, is journaled to be sent again).
        case stopping(Held)
    }

    /// Rejections held for one topic, none accepted, that stop the campaign.
    let limit: Int
    private var confirmed: Set<String> = []
    /// The topic confirmed last: most answers are for it, and comparing with it costs less than a set lookup.
    private var lastConfirmed: String?
    private var held: [String: [Held]] = [:]
    /// Whether the campaign stopped for an unconfirmed topic.
    private(set) var stopped = false

    init(limit: Int = 20) {
        self.limit = max(1, limit)
    }

    /// Whether any topic was confirmed in this run.
    var confirmedAny: Bool { lastConfirmed != nil }

    /// Whether any rejection is held.
    var holdsAny: Bool { !held.isEmpty }

    /// Whether the action and reason are a token rejection this check holds.
    static func isTokenRejection(_ action: SendAction, reason: APNSReason?) -> Bool {
        action == .prune && (reason == .badDeviceToken || reason == .deviceTokenNotForTopic)
    }

    /// Whether the action and reason confirm the topic: a delivery, or a 410 for a token of this app.
    static func confirms(_ action: SendAction, reason: APNSReason?) -> Bool {
        action == .delivered || (action == .prune && !isTokenRejection(action, reason: reason))
    }

    /// A token of `topic` was accepted (or answered 410): the topic is confirmed, and the rejections held for it
    /// are dead tokens, returned as their lines to be written.
    mutating func confirm(topic: String) -> [ResultRecord] {
        if topic == lastConfirmed { return [] }
        lastConfirmed = topic
        guard confirmed.insert(topic).inserted else { return [] }
        return (held.removeValue(forKey: topic) ?? []).map(\.deadToken)
    }

    /// The token of `send` (its answer recorded, `apnsID` that answer's) was rejected as bad.
    mutating func reject(_ send: PendingSend, apnsID: String?) -> Verdict {
        let topic = send.notification.topic.value
        if topic == lastConfirmed || confirmed.contains(topic) { return .prune }
        let rejection = Held(send: send, apnsID: apnsID)
        if stopped { return .stopping(rejection) }
        held[topic, default: []].append(rejection)
        guard let count = held[topic]?.count, count >= limit else { return .held }
        return .stop(Self.stopReason(reason: send.lastReason, topic: topic, count: count))
    }

    /// The campaign stops (for an unconfirmed topic, or any other cause): what is held is returned, to end
    /// retryable (`Held.unconfirmed`) and be sent again when the campaign is continued; later rejections of
    /// unconfirmed topics are not held either.
    mutating func stop() -> [Held] {
        stopped = true
        return takeHeld()
    }

    /// The run ends with rejections still held: when no topic at all was confirmed, the campaign stops for
    /// them (the reason, and the records as retryable); otherwise the topics confirmed show the endpoint is right,
    /// and the records are dead tokens marked unconfirmed for their topic.
    mutating func settle() -> (stopReason: String?, results: [ResultRecord]) {
        guard !held.isEmpty else { return (nil, []) }
        if !confirmedAny {
            let topic = held.keys.sorted().max { (held[$0]?.count ?? 0) < (held[$1]?.count ?? 0) } ?? ""
            let records = held[topic] ?? []
            let reason = Self.stopReason(reason: records.first?.send.lastReason, topic: topic, count: records.count)
            return (reason, stop().map(\.unconfirmed))
        }
        return (
            nil,
            takeHeld().map { rejection in
                var line = rejection.deadToken
                line.detail = Self.unconfirmedDetail(topic: rejection.send.notification.topic.value)
                return line
            }
        )
    }

    /// The detail of a dead-token line whose topic no accepted token confirmed (`prune` holds these back).
    static func unconfirmedDetail(topic: String) -> String {
        "\(unconfirmedPrefix) no token of topic \(topic) was accepted in this run"
    }

    /// How the detail of such a line begins.
    static let unconfirmedPrefix = "unconfirmed:"

    /// What is held, topic by topic, and nothing held any more.
    private mutating func takeHeld() -> [Held] {
        let all = held.keys.sorted().flatMap { held[$0] ?? [] }
        held = [:]
        return all
    }

    /// The stop's reason, its first word the APNs reason (as `CampaignHealth`'s are): "BadDeviceToken for every
    /// token of topic com.example.app (20 answers, none accepted)".
    static func stopReason(reason: String?, topic: String, count: Int) -> String {
        "\(reason ?? APNSReason.badDeviceToken.rawValue) for every token of topic \(topic) (\(CountedNoun.text(count, "answer")), none accepted)"
    }
}

// MARK: - Held

extension TokenRejectionCheck {
    /// One rejection held back: the send, its answer recorded in it, and the answer's apns-id.
    struct Held {
        let send: PendingSend
        let apnsID: String?

        /// Its line as a dead token.
        var deadToken: ResultRecord { send.finalResult(.prune, detail: nil, apnsID: apnsID) }

        /// Its line when its topic was never confirmed: retryable, with the notification to send again.
        var unconfirmed: ResultRecord {
            let topic = send.notification.topic.value
            return send.finalResult(
                .retryable,
                detail:
                    "held back: no token of topic \(topic) was accepted, so the endpoint or the topic is in question",
                apnsID: apnsID)
        }
    }
}
