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
        out += "\"by_status\":" + Self.object(byStatus.sorted { $0.key < $1.key }.map { (String($0.key), $0.value) }) + ","
        out += "\"by_reason\":" + Self.object(byReason.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }) + ","
        out += "\"by_connection\":" + Self.object(byConnection.sorted { $0.key < $1.key }.map { (String($0.key), $0.value) }) + ","
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
