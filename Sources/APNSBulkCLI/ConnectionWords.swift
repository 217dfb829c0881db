import APNSPipeline

/// The words of an earlier command that say where and as whom it sent (endpoint, CA file, pins, proxy, the key or
/// the certificate), which a printed `replay` command carries over so that it can be pasted as it stands
/// (docs/RUNNING-AGAIN.md "Replaying"). Passwords are never on a command line (`APNS_P12_PASSWORD`); options taken
/// from the environment stay there and apply again where the same environment is set.
enum ConnectionWords {
    /// The options that take a value and name the connection or the credentials.
    static let options: [String] = [
        "--endpoint", "--ca-file", "--pin", "--proxy", "--resolve", "--key", "--key-id", "--team-id", "--topic-key",
        "--cert", "--cert-key", "--p12",
    ]

    /// Those options and their values in `arguments`, in their order, each value quoted for the shell when it
    /// needs it.
    static func words(in arguments: [String]) -> [String] {
        var words: [String] = []
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            if word == "--" { break }
            if options.contains(word), index + 1 < arguments.count {
                words += [word, ShellWord.quoted(arguments[index + 1])]
                index += 2
                continue
            }
            if let equals = word.firstIndex(of: "="), options.contains(String(word[..<equals])) {
                words += [String(word[..<equals]), ShellWord.quoted(String(word[word.index(after: equals)...]))]
            }
            index += 1
        }
        return words
    }

    /// The connection words of the first of `resultPaths` whose campaign record names them (the campaign's first
    /// run; its replays were given the same).
    static func words(forResults resultPaths: [String]) -> [String] {
        for path in resultPaths {
            guard let manifest = try? CampaignManifest.read(forResults: path) else { continue }
            let found = words(in: manifest.arguments)
            if !found.isEmpty { return found }
        }
        return []
    }
}
