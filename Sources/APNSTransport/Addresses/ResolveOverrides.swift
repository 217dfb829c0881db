/// The `--resolve` entries of a run: the addresses to dial for each HOST:PORT given, instead of resolving it.
public struct ResolveOverrides: Hashable, Sendable {
    /// The overrides, in the order added.
    public private(set) var entries: [ResolveOverride] = []

    /// No overrides.
    public init() {}

    /// The entries in the order given; one HOST:PORT given twice is refused (put all its addresses in one entry).
    public init(_ entries: [ResolveOverride]) throws(ResolveOverrideError) {
        for entry in entries {
            if addresses(host: entry.host, port: entry.port) != nil {
                throw ResolveOverrideError(
                    "\(entry.host):\(entry.port) is given twice; list its addresses in one entry")
            }
            self.entries.append(entry)
        }
    }

    /// The addresses to dial for `host` (any letter case, an IPv6 literal with or without brackets) on `port`, or
    /// nil to resolve the name.
    public func addresses(host: String, port: Int) -> [SocketAddress]? {
        entries.first { $0.matches(host: host, port: port) }?.addresses
    }

    /// Whether there is no override.
    public var isEmpty: Bool { entries.isEmpty }
}
