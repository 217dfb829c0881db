/// The middle of a plain delivery's result line for one topic, `","topic":"<topic>","outcome":"delivered",
/// "status":200` (from the token's closing quote to the status), made once and reused while the topic stays the
/// same: a campaign's lines mostly share one topic, so each line is spared the topic's escape check and two
/// appends. `ResultWriter` keeps one; `ResultRecord.appendNDJSON` brings it up to date.
struct DeliveryLineMiddle {
    /// The topic `bytes` were made for; nil before the first.
    private(set) var topic: String?
    private(set) var bytes: [UInt8] = []

    /// Remakes `bytes` when `topic` is not the one they were made for.
    mutating func update(for topic: String) {
        guard topic != self.topic else { return }
        var bytes: [UInt8] = []
        bytes.append(contentsOf: #"","topic":""#.utf8)
        JSONText.appendStringContents(topic, to: &bytes)
        bytes.append(UInt8(ascii: "\""))  // the topic's closing quote
        ResultRecord.deliveredWith200.withUTF8Buffer { bytes.append(contentsOf: $0) }
        self.bytes = bytes
        self.topic = topic
    }
}
