/// Which provider key signs the requests of each topic, in a run given several keys (`send --topic-key`): each
/// key names the bundle ids it covers, and one key may be the default for every topic no bundle id names.
///
/// A bundle id covers the topic equal to it and every topic that starts with it and a dot (the push types'
/// suffixes, `.voip`, `.push-type.liveactivity`, …, and an app's extensions); the longest bundle id that covers a
/// topic wins, so `com.example.app.widget` can have a key of its own beside `com.example.app`. Keys are numbered
/// from 0 in the order the caller lists them (docs/CONNECTING.md, "Several provider keys").
public struct TopicKeyRoutes: Sendable, Hashable {
    /// One bundle id and the key that covers it.
    public struct Route: Sendable, Hashable {
        /// The bundle id whose topics take this route.
        public let bundleID: String
        /// The key of the credentials the bundle id's notifications use.
        public let key: Int

        /// A route of `bundleID`'s topics to `key`.
        public init(bundleID: String, key: Int) {
            self.bundleID = bundleID
            self.key = key
        }
    }

    /// The routes, longest bundle id first (the order `key(for:)` tries them in).
    public let routes: [Route]
    /// The key for topics no route covers; nil: such topics are not sent (`uncovered(_:)`).
    public let defaultKey: Int?

    /// Routes by bundle id; topics no route names go to `defaultKey`, or nowhere when it is nil.
    public init(routes: [Route], defaultKey: Int?) {
        self.routes = routes.sorted { $0.bundleID.utf8.count > $1.bundleID.utf8.count }
        self.defaultKey = defaultKey
    }

    /// The key that signs requests to `topic`, or nil when no key covers it.
    public func key(for topic: Topic) -> Int? {
        let value = topic.value.utf8
        for route in routes {
            let bundle = route.bundleID.utf8
            guard value.starts(with: bundle) else { continue }
            if value.count == bundle.count { return route.key }
            if value[value.index(value.startIndex, offsetBy: bundle.count)] == UInt8(ascii: ".") { return route.key }
        }
        return defaultKey
    }

    /// Why a record to `topic` cannot be sent (`TopicNotCovered`, naming the bundle ids the keys cover), or nil
    /// when a key covers it.
    public func uncovered(_ topic: Topic) -> InputError? {
        guard key(for: topic) == nil else { return nil }
        let covered = routes.map(\.bundleID).sorted().joined(separator: ", ")
        return InputError(
            .topicNotCovered,
            "no provider key covers topic '\(topic.value)' (the keys cover \(covered)): add --topic-key "
                + "\(topic.value)=<file>,key-id=<id>,team-id=<id>, or --key for a default key")
    }
}
