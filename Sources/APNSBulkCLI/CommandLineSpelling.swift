import ArgumentParser

/// Owns the near-miss check of a command line before argument-parser reads it: a subcommand or option name that
/// is one or two edits from a real one (`sned`, `--resluts`) is answered with the name meant, where
/// argument-parser would report the first required option missing or say only "unexpected argument".
struct CommandLineSpelling {
    /// The subcommands by name, and the option names (`--results`) each one's help screen shows.
    let commands: [String: Set<String>]
    /// The options of the root command.
    let rootOptions: Set<String>

    /// The spelling of apns-bulk's own command line.
    static let apnsBulk = CommandLineSpelling(
        commands: Dictionary(
            uniqueKeysWithValues: APNSBulkCommand.configuration.subcommands.map { command in
                (command._commandName, optionNames(in: command.helpMessage(columns: 10_000)))
            }),
        rootOptions: ["--help", "-h", "--version"])

    /// The option names written in a help screen: every `--name` in it (the synopsis, the option list, and the
    /// options its text names), plus `--help`.
    static func optionNames(in help: String) -> Set<String> {
        var names: Set<String> = ["--help"]
        var current: [UInt8] = []
        func flush() {
            if current.count > 2 { names.insert(String(decoding: current, as: UTF8.self)) }
            current.removeAll(keepingCapacity: true)
        }
        var previous: UInt8 = 0x20
        for byte in help.utf8 {
            let isNameByte =
                byte == UInt8(ascii: "-") || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            if current.isEmpty {
                if byte == UInt8(ascii: "-"), !isWordByte(previous) { current.append(byte) }
            } else if current.count == 1 {
                if byte == UInt8(ascii: "-") { current.append(byte) } else { current.removeAll(keepingCapacity: true) }
            } else if isNameByte {
                current.append(byte)
            } else {
                flush()
            }
            previous = byte
        }
        flush()
        return names.filter { $0.count > 3 && !$0.hasSuffix("-") }
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
    }

    /// The first misspelt name in `arguments` (the command line without the program name) and the one meant, as
    /// the error's text; nil when every name is known or no known name is near (argument-parser's own message
    /// then stands).
    func mistake(in arguments: [String]) -> String? {
        guard let first = arguments.first else { return nil }
        if !first.hasPrefix("-"), first != "help" {
            guard let options = commands[first] else {
                guard let meant = Self.nearest(to: first, among: commands.keys) else { return nil }
                return "unknown command '\(first)'; did you mean '\(meant)'? (commands: "
                    + commands.keys.sorted().joined(separator: ", ") + ")"
            }
            return misspeltOption(in: arguments.dropFirst(), options: options, command: "apns-bulk \(first)")
        }
        return misspeltOption(in: arguments[...], options: rootOptions, command: "apns-bulk")
    }

    private func misspeltOption(in arguments: ArraySlice<String>, options: Set<String>, command: String) -> String? {
        for argument in arguments {
            if argument == "--" { return nil }  // what follows is operands
            guard argument.hasPrefix("--"), argument.count > 2 else { continue }
            let name = String(argument.prefix { $0 != "=" })
            guard !options.contains(name), let meant = Self.nearest(to: name, among: options) else { continue }
            return "unknown option '\(name)' for '\(command)'; did you mean '\(meant)'? (see '\(command) --help')"
        }
        return nil
    }

    /// The one name within two edits of `word` (a swap of neighbours counts as one), the nearest first; nil when
    /// none is, or when two are equally near.
    static func nearest(to word: String, among names: some Sequence<String>) -> String? {
        let limit = word.count <= 4 ? 1 : 2
        var best: (name: String, distance: Int)?
        var tied = false
        for name in names {
            let distance = editDistance(Array(word.utf8), Array(name.utf8))
            guard distance <= limit else { continue }
            if let current = best {
                if distance < current.distance {
                    best = (name, distance)
                    tied = false
                } else if distance == current.distance {
                    tied = true
                }
            } else {
                best = (name, distance)
            }
        }
        return tied ? nil : best?.name
    }

    /// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two neighbours.
    static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var rows = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { rows[i][0] = i }
        for j in 0...b.count { rows[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    value = min(value, rows[i - 2][j - 2] + 1)
                }
                rows[i][j] = value
            }
        }
        return rows[a.count][b.count]
    }
}
