/// What makes a campaign the campaign it is: the command (`send` or `replay`), its inputs by content (a 128-bit
/// `ContentFingerprint` of each file's bytes, so a file rewritten under the same name is another campaign, and the same file named by
/// another path is the same), and every setting that changes what is sent or how results are written (topic,
/// push type, priority, expiration, collapse id, template, token column, record limit, shard, duplicates,
/// result format; for `replay`, its overrides and whether in-doubt records are included).
///
/// Credentials, the endpoint and pacing are not part of it: they are what a stopped campaign is finished with.
/// A result file's campaign record (`CampaignRecordFile`) holds the identity it was written for; running again
/// compares them (docs/RUNNING-AGAIN.md).
public struct CampaignIdentity: Codable, Sendable, Equatable {
    /// One input file: its path as given, and its content's fingerprint (nil for standard input, which cannot be
    /// read twice).
    public struct Input: Codable, Sendable, Equatable {
        /// The input file's path.
        public var path: String
        /// A fingerprint of the file's content; nil when not taken.
        public var fingerprint: String?

        /// An input from its path and fingerprint.
        public init(path: String, fingerprint: String?) {
            self.path = path
            self.fingerprint = fingerprint
        }

        /// The input at `path`, fingerprinted (standard input, `-`, and other streams are not: reading them first
        /// would leave nothing to send).
        public static func reading(_ path: String) throws(PipelineError) -> Input {
            guard !CampaignInput(path: path).isStream else { return Input(path: path, fingerprint: nil) }
            if POSIXFile.isDirectory(atPath: path) {
                throw PipelineError(.openFailed, "\(path): is a directory, not a campaign file")
            }
            return Input(path: path, fingerprint: try ContentFingerprint.hex(ofFileAtPath: path))
        }
    }

    /// `send` or `replay`.
    public var command: String
    /// The campaign's inputs, in order.
    public var inputs: [Input]
    /// Option name (`--topic`) to value as the run understood it; options not given are absent.
    public var settings: [String: String]

    /// An identity from the command, inputs and settings.
    public init(command: String, inputs: [Input], settings: [String: String]) {
        self.command = command
        self.inputs = inputs
        self.settings = settings
    }

    /// What differs between an earlier run's identity and this one, one phrase each ("--topic: com.a now,
    /// com.b before"); empty when they are the same campaign. Inputs compare by content; paths only where
    /// neither side has a fingerprint (standard input).
    public func differences(from earlier: CampaignIdentity, ignoring allowed: Set<String> = []) -> [String] {
        var found: [String] = []
        if command != earlier.command {
            found.append("it was written by `\(earlier.command)`, not `\(command)`")
        }
        if inputs.count != earlier.inputs.count {
            found.append("\(inputs.count) input files now, \(earlier.inputs.count) before")
        } else {
            for (now, before) in zip(inputs, earlier.inputs) where !now.isSameContent(as: before) {
                let name = now.path == before.path ? now.path : "\(now.path) (before: \(before.path))"
                found.append("the input \(name) has changed since the earlier run")
            }
        }
        for name in Set(settings.keys).union(earlier.settings.keys).sorted()
        where settings[name] != earlier.settings[name] && !allowed.contains(name) {
            found.append("\(name): \(Self.shown(settings[name])) now, \(Self.shown(earlier.settings[name])) before")
        }
        return found
    }

    private static func shown(_ value: String?) -> String {
        guard let value else { return "not given" }
        return value.isEmpty ? "given" : value
    }
}

extension CampaignIdentity.Input {
    /// Same bytes, or, for standard input (no fingerprint on either side), the same name.
    func isSameContent(as other: CampaignIdentity.Input) -> Bool {
        guard fingerprint != nil || other.fingerprint != nil else { return path == other.path }
        return fingerprint == other.fingerprint
    }
}
