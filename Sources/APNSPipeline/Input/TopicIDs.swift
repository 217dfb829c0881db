import APNSCore

/// Small numbers for the topics a run has seen, in order of first sight (0, 1, 2, …): the duplicate filter's key
/// ends with one instead of the topic's text. A run's records nearly always share one topic, so the last one is
/// compared first.
struct TopicIDs {
    private var ids: [String: Int] = [:]
    private var last: (topic: String, id: Int)?

    /// The topic's id, given on first sight.
    mutating func id(of topic: Topic) -> Int {
        if let last, last.topic == topic.value { return last.id }
        let id: Int
        if let known = ids[topic.value] {
            id = known
        } else {
            id = ids.count
            ids[topic.value] = id
        }
        last = (topic.value, id)
        return id
    }
}
