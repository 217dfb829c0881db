import APNSCore

/// What the mock has done so far: requests by status, by reason and by connection, plus connection-level events.
/// The validator records into it; the glue renders it (`summary`, `json`) when the server exits.
public struct MockCounters: Sendable, Equatable {
    /// Requests handed to the validator (answered, refused or dropped).
    public internal(set) var requests = 0
    /// Requests answered, by HTTP status.
    public var byStatus: [Int: Int] {
        var all = otherStatuses
        if accepted > 0 { all[200] = accepted }
        return all
    }
    /// Rejected requests, by reason as APNs spells it.
    public internal(set) var byReason: [String: Int] = [:]
    /// Requests by connection id.
    public var byConnection: [Int: Int] {
        var all = earlierConnections
        if let current = currentConnection { all[current.id, default: 0] += current.requests }
        return all
    }

    // Per request, no hashing: 200s apart from the other statuses, and the requests of the connection recorded
    // last apart from the rest (a connection's requests come in runs, so its count is folded in once per run).
    private var accepted = 0
    private var otherStatuses: [Int: Int] = [:]
    private var currentConnection: (id: Int, requests: Int)?
    private var earlierConnections: [Int: Int] = [:]
    /// Connections opened through `MockValidator.openConnection`.
    public internal(set) var connectionsOpened = 0
    /// Answers replaced by an injected fault (429, 500, 503, expired-token).
    public internal(set) var faultAnswers = 0
    /// GOAWAY frames requested.
    public internal(set) var goaways = 0
    /// Connections dropped.
    public internal(set) var drops = 0
    /// Streams refused (requests above a GOAWAY's last-stream-id).
    public internal(set) var refusedStreams = 0
    /// Stream-limit raises (connections that authenticated) and lowerings (fault).
    public internal(set) var streamLimitRaises = 0
    /// Times the server lowered its concurrent stream limit.
    public internal(set) var streamLimitLowerings = 0
    /// Answers delayed by injected latency.
    public internal(set) var delayedAnswers = 0
    /// ES256 signature verifications (a connection verifies each distinct token once).
    public internal(set) var signatureVerifications = 0

    /// Counters all at zero.
    public init() {}

    /// Answered requests (every status).
    public var answered: Int { byStatus.values.reduce(0, +) }

    /// Records one decision for a request on `connectionID`.
    mutating func record(_ decision: MockDecision, connectionID: Int) {
        requests += 1
        if currentConnection?.id == connectionID {
            currentConnection?.requests += 1
        } else {
            if let current = currentConnection { earlierConnections[current.id, default: 0] += current.requests }
            currentConnection = (connectionID, 1)
        }
        if let response = decision.response {
            if response.status == 200 { accepted += 1 } else { otherStatuses[response.status, default: 0] += 1 }
            if let reason = response.reason { byReason[reason.rawValue, default: 0] += 1 }
        }
        for action in decision.actions {
            switch action {
            case .raiseStreamLimit: streamLimitRaises += 1
            case .lowerStreamLimit: streamLimitLowerings += 1
            case .goaway: goaways += 1
            case .dropConnection: drops += 1
            case .delay: delayedAnswers += 1
            case .refuseStream: refusedStreams += 1
            }
        }
    }

    /// Whether every counter is equal.
    public static func == (a: MockCounters, b: MockCounters) -> Bool {
        a.requests == b.requests && a.byStatus == b.byStatus && a.byReason == b.byReason
            && a.byConnection == b.byConnection
            && a.connectionsOpened == b.connectionsOpened && a.faultAnswers == b.faultAnswers && a.goaways == b.goaways
            && a.drops == b.drops && a.refusedStreams == b.refusedStreams && a.streamLimitRaises == b.streamLimitRaises
            && a.streamLimitLowerings == b.streamLimitLowerings && a.delayedAnswers == b.delayedAnswers
            && a.signatureVerifications == b.signatureVerifications
    }

    mutating func recordConnectionOpened() {
        connectionsOpened += 1
    }

    mutating func recordSignatureVerification() {
        signatureVerifications += 1
    }

    mutating func recordFaultAnswer() {
        faultAnswers += 1
    }
}

// MARK: - Rendering

/// Rendering of the counters: a human summary for stderr and a JSON document for the file written on exit.
extension MockCounters {
    /// A few lines for a person, for example:
    ///
    ///     requests 1200 (answered 1199) on 3 connections
    ///     status 200: 1100, 410: 99
    ///     reason Unregistered: 99
    ///     events goaway 0, drop 1, refused 0, raise 3, lower 0, delayed 0, fault answers 0, signature checks 3
    public var summary: String {
        var lines: [String] = []
        lines.append("requests \(requests) (answered \(answered)) on \(connectionsOpened) connections")
        let statuses = byStatus.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        lines.append("status " + (statuses.isEmpty ? "none" : statuses.joined(separator: ", ")))
        let reasons = byReason.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.key): \($0.value)" }
        lines.append("reason " + (reasons.isEmpty ? "none" : reasons.joined(separator: ", ")))
        lines.append(
            "events goaway \(goaways), drop \(drops), refused \(refusedStreams), raise \(streamLimitRaises), "
                + "lower \(streamLimitLowerings), delayed \(delayedAnswers), fault answers \(faultAnswers), "
                + "signature checks \(signatureVerifications)"
        )
        return lines.joined(separator: "\n") + "\n"
    }

    /// One JSON object with sorted keys, for example:
    /// `{"requests":3,"answered":3,"connections":1,"by_status":{"200":2,"410":1},"by_reason":{"Unregistered":1},`
    /// `"by_connection":{"1":3},"goaways":0,"drops":0,"refused_streams":0,"stream_limit_raises":1,`
    /// `"stream_limit_lowerings":0,"delayed_answers":0,"fault_answers":0,"signature_verifications":1}`
    public var json: String {
        var out = "{"
        out += "\"requests\":\(requests),\"answered\":\(answered),\"connections\":\(connectionsOpened),"
        out +=
            "\"by_status\":" + Self.object(byStatus.sorted { $0.key < $1.key }.map { (String($0.key), $0.value) }) + ","
        out += "\"by_reason\":" + Self.object(byReason.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }) + ","
        out +=
            "\"by_connection\":"
            + Self.object(byConnection.sorted { $0.key < $1.key }.map { (String($0.key), $0.value) }) + ","
        out += "\"goaways\":\(goaways),\"drops\":\(drops),\"refused_streams\":\(refusedStreams),"
        out += "\"stream_limit_raises\":\(streamLimitRaises),\"stream_limit_lowerings\":\(streamLimitLowerings),"
        out += "\"delayed_answers\":\(delayedAnswers),\"fault_answers\":\(faultAnswers),"
        out += "\"signature_verifications\":\(signatureVerifications)"
        out += "}"
        return out
    }

    private static func object(_ members: [(String, Int)]) -> String {
        var out = "{"
        for (index, member) in members.enumerated() {
            if index > 0 { out += "," }
            var key: [UInt8] = []
            ResponseBodies.appendEscaped(member.0, to: &key)
            out += "\"" + String(decoding: key, as: UTF8.self) + "\":\(member.1)"
        }
        return out + "}"
    }
}
