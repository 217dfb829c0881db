import APNSCore
import APNSCrypto

/// One `--topic-key` value: a bundle id and the provider key that signs the requests of its topics,
/// `BUNDLE-ID=FILE,key-id=ID,team-id=ID` (docs/CONNECTING.md, "Several provider keys"). `team-id=` may be left
/// out when `--team-id` gives it; a file name with a comma cannot be given here.
struct TopicKeyOption: Hashable {
    let bundleID: String
    let keyFile: String
    let keyID: String
    let teamID: String

    init(bundleID: String, keyFile: String, keyID: String, teamID: String) {
        self.bundleID = bundleID
        self.keyFile = keyFile
        self.keyID = keyID
        self.teamID = teamID
    }

    /// Parses `text`; `teamID` is `--team-id`'s value, for an entry without `team-id=`. Errors say what is wrong,
    /// to follow "--topic-key '<text>': ".
    init(parsing text: String, teamID defaultTeamID: String?) throws(TopicKeyOptionError) {
        let form = "BUNDLE-ID=FILE,key-id=ID,team-id=ID"
        guard let equals = text.firstIndex(of: "=") else { throw .init("expected \(form)") }
        let bundleID = String(text[..<equals])
        do throws(InputError) {
            _ = try Topic(validating: bundleID)
        } catch {
            throw .init("the bundle id: \(error.detail)")
        }
        guard !bundleID.hasSuffix(".") else { throw .init("the bundle id '\(bundleID)' ends in a dot") }
        let parts = text[text.index(after: equals)...].split(separator: ",", omittingEmptySubsequences: false)
        guard let file = parts.first, !file.isEmpty else {
            throw .init("no key file after '\(bundleID)=' (expected \(form))")
        }
        var keyID: String?
        var teamID: String?
        for part in parts.dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2 else { throw .init("'\(part)' is not key-id=ID or team-id=ID") }
            let value = String(pair[1])
            switch pair[0] {
            case "key-id":
                guard keyID == nil else { throw .init("key-id is given twice") }
                keyID = value
            case "team-id":
                guard teamID == nil else { throw .init("team-id is given twice") }
                teamID = value
            default:
                throw .init("unknown '\(pair[0])=' (known: key-id=, team-id=; a key file's name cannot hold a comma)")
            }
        }
        guard let keyID else { throw .init("no key-id=ID (the key's 10-character id)") }
        guard let teamID = teamID ?? defaultTeamID else { throw .init("no team-id=ID, and no --team-id for it") }
        do {
            try ProviderIdentifier.validateKeyID(keyID)
            try ProviderIdentifier.validateTeamID(teamID)
        } catch {
            throw .init(error.description)
        }
        self.init(bundleID: bundleID, keyFile: String(file), keyID: keyID, teamID: teamID)
    }
}

/// Why a `--topic-key` value cannot be read.
struct TopicKeyOptionError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

// MARK: - ProviderKeySet

/// The provider keys of a run and which topics each signs for: the distinct keys of `--topic-key` and the plain
/// `--key` (the default, for topics no `--topic-key` names), each key once however many bundle ids it covers, so
/// that it gets one pool and one token. Key 0 is the default key when there is one.
struct ProviderKeySet: Equatable {
    /// A key as its file and ids name it.
    struct Key: Hashable {
        let file: String
        let keyID: String
        let teamID: String

        /// "key ABC1234567 of team TEAM123456", for messages.
        var label: String { "key \(keyID) of team \(teamID)" }
    }

    let keys: [Key]
    let routes: TopicKeyRoutes

    /// - Parameters:
    ///   - defaultKey: the plain `--key` with its ids, if given.
    ///   - entries: the `--topic-key` values, parsed.
    init(defaultKey: Key?, entries: [TopicKeyOption]) throws(TopicKeyOptionError) {
        var keys: [Key] = defaultKey.map { [$0] } ?? []
        var routes: [TopicKeyRoutes.Route] = []
        var seen: [String: TopicKeyOption] = [:]
        for entry in entries {
            if let earlier = seen[entry.bundleID] {
                throw .init(
                    "\(entry.bundleID) is given twice (key ids \(earlier.keyID) and \(entry.keyID)); give each bundle id one key"
                )
            }
            seen[entry.bundleID] = entry
            let key = Key(file: entry.keyFile, keyID: entry.keyID, teamID: entry.teamID)
            if let same = keys.firstIndex(where: { $0.keyID == key.keyID && $0.teamID == key.teamID }) {
                guard keys[same].file == key.file else {
                    throw .init("key id \(key.keyID) is given with two files (\(keys[same].file) and \(key.file))")
                }
                routes.append(.init(bundleID: entry.bundleID, key: same))
            } else {
                keys.append(key)
                routes.append(.init(bundleID: entry.bundleID, key: keys.count - 1))
            }
        }
        self.keys = keys
        self.routes = TopicKeyRoutes(routes: routes, defaultKey: defaultKey == nil ? nil : 0)
    }
}
