import Foundation
import Testing

/// Every error in one voice (docs/RUNNING.md "Exit status"): a table of mistakes people make on the command line,
/// each answered on stderr by exactly one line `apns-bulk: error: …` that names the option or the file given, in
/// lower case after the colon, with plurals right and no doubled full stop, and the usage status (64) or the
/// failure status (1) the exit-status table gives. Nothing here reaches a server: every case fails before it.
@Suite("one voice in every error")
struct OneVoiceEndToEndTests {
    struct Case: CustomStringConvertible {
        let arguments: [String]
        let status: Int32
        /// Words the line must hold: the option or file named, and the fix where there is one.
        let names: [String]
        var description: String { arguments.joined(separator: " ") }
    }

    static let credentials = [
        "--key", MockProcess.keyFile, "--key-id", MockProcess.keyID, "--team-id", MockProcess.teamID,
        "--topic", MockProcess.topic,
    ]
    static let campaign = Tool.path("samples/campaign.ndjson")
    static func send(_ extra: [String]) -> [String] {
        ["send", campaign, "--results", "out.ndjson"] + credentials + extra
    }

    static let cases: [Case] = [
        Case(arguments: ["send", campaign], status: 64, names: ["--results"]),
        Case(arguments: ["sned", campaign], status: 64, names: ["'sned'", "'send'"]),
        Case(
            arguments: ["send", campaign, "--resluts", "o.ndjson"], status: 64, names: ["'--resluts'", "'--results'"]),
        Case(arguments: send(["--rate", "-5"]), status: 64, names: ["--rate", "positive"]),
        Case(arguments: send(["--max-attempts", "0"]), status: 64, names: ["--max-attempts", "1 to 100"]),
        Case(arguments: send(["--connections", "0"]), status: 64, names: ["--connections"]),
        Case(arguments: send(["--expiration", "soon"]), status: 64, names: ["--expiration", "30m"]),
        Case(arguments: send(["--not-after", "tomorrow"]), status: 64, names: ["--not-after", "ISO-8601"]),
        Case(arguments: send(["--csv-delimiter", "xx"]), status: 64, names: ["--csv-delimiter"]),
        Case(arguments: send(["--input-format", "xml"]), status: 64, names: ["--input-format", "ndjson or csv"]),
        Case(arguments: send(["--endpoint", "ftp://x"]), status: 64, names: ["--endpoint", "https://"]),
        Case(arguments: send(["--shard", "3/2"]), status: 64, names: ["shard", "0 and 1"]),
        Case(arguments: send(["--topic-key", "bad"]), status: 64, names: ["--topic-key", "BUNDLE-ID=FILE"]),
        Case(arguments: send(["--ca-file", "nope.pem"]), status: 1, names: ["--ca-file", "nope.pem"]),
        Case(arguments: send(["--pushgateway", "ftp://x"]), status: 64, names: ["--pushgateway", "http://host:port"]),
        Case(
            arguments: send(["--pushgateway", "http://u:p@gw:9091"]), status: 64,
            names: ["--pushgateway-user", "APNS_PUSHGATEWAY_PASSWORD"]),
        Case(
            arguments: send(["--pushgateway-interval", "5s"]), status: 64,
            names: ["--pushgateway-interval", "--pushgateway URL"]),
        Case(
            arguments: send(["--pushgateway", "http://gw:9091", "--pushgateway-user", "ops"]), status: 64,
            names: ["--pushgateway-user", "--pushgateway-password-file"]),
        Case(
            arguments: send(["--pushgateway", "http://gw:9091", "--pushgateway-ca-file", "ca.pem"]), status: 64,
            names: ["--pushgateway-ca-file", "https://"]),
        Case(
            arguments: [
                "send", campaign, "--results", "o.ndjson", "--key", "missing.p8", "--key-id", "X", "--team-id",
                "TEAMID1234",
            ],
            status: 64, names: ["--key-id", "1 character;", "10 letters or digits"]),
        Case(
            arguments: [
                "send", campaign, "--results", "o.ndjson", "--key", "missing.p8", "--key-id", MockProcess.keyID,
                "--team-id", MockProcess.teamID, "--topic", MockProcess.topic,
            ], status: 1, names: ["--key", "missing.p8"]),
        Case(
            arguments: ["send", campaign, "--results", "o.ndjson", "--key-id", "X"], status: 64,
            names: ["--key", "--cert", "--p12"]),
        Case(
            arguments: ["send", "missing.ndjson", "--results", "o.ndjson"] + credentials, status: 1,
            names: ["missing.ndjson"]),
        Case(
            arguments: ["send", campaign, "--results", campaign] + credentials, status: 64,
            names: ["--results", "the input"]),
        Case(
            arguments: ["send", campaign, "--results", "/nonexistent/dir/o.ndjson"] + credentials, status: 1,
            names: ["--results", "/nonexistent/dir"]),
        Case(
            arguments: ["replay", "nope.ndjson", "--results", "r.ndjson"] + credentials, status: 1,
            names: ["nope.ndjson"]),
        Case(arguments: ["validate", "nope.ndjson"], status: 1, names: ["nope.ndjson"]),
        Case(arguments: ["report", "nope.ndjson", "--html", "x.html"], status: 1, names: ["nope.ndjson"]),
        Case(arguments: ["report", "r.ndjson"], status: 64, names: ["--html", "--json"]),
        Case(arguments: ["prune"], status: 64, names: ["<results>"]),
        Case(arguments: ["prune", "nope.ndjson"], status: 1, names: ["nope.ndjson"]),
        Case(arguments: ["pin", "nope.pem"], status: 1, names: ["nope.pem"]),
        Case(arguments: ["pin", "Cert.pem"], status: 1, names: ["Cert.pem"]),
        Case(
            arguments: ["token", "--key", "nope.p8", "--key-id", "X", "--team-id", "TEAMID1234"], status: 64,
            names: ["--key-id"]),
        Case(arguments: ["mock"], status: 64, names: ["--key-id", "--client-ca"]),
        Case(
            arguments: ["mock", "--listen", "nohost"] + credentials.dropLast(2), status: 64,
            names: ["--listen", "HOST:PORT"]),
    ]

    @Test(
        "each mistake: one line, apns-bulk: error:, the option or file named, lower case, plurals right",
        arguments: cases)
    func oneLine(_ mistake: Case) throws {
        let work = try TemporaryDirectory()
        let run = try Tool.run(mistake.arguments, timeout: 30, directory: work.path)
        let lines = run.stderr.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.isEmpty }
        #expect(run.status == mistake.status, "exit \(run.status), not \(mistake.status): \(run.stderr)")
        #expect(lines.count == 1, "\(lines.count) lines: \(run.stderr)")
        let line = String(lines.first ?? "")
        #expect(line.hasPrefix("apns-bulk: error: "), "\(line)")
        let message = line.dropFirst("apns-bulk: error: ".count)
        let firstWord = message.prefix { $0.isLetter }
        #expect(
            !(firstWord.count > 1 && firstWord.first?.isUppercase == true
                && firstWord.dropFirst().allSatisfy(\.isLowercase)),
            "a capitalised first word: \(line)")
        for wrong in ["Error:", ".;", ". ;", "error: error"] {
            #expect(!line.contains(wrong), "\"\(wrong)\" in: \(line)")
        }
        #expect(
            line.range(of: #"[^.]\.\.($|[^.])"#, options: .regularExpression) == nil, "a doubled full stop: \(line)")
        #expect(
            line.range(
                of: #"\b1 (characters|records|tokens|duplicates|requests|files|retries|lines|keys)\b"#,
                options: .regularExpression) == nil, "a plural after 1: \(line)")
        for name in mistake.names {
            #expect(line.contains(name), "\"\(name)\" not named: \(line)")
        }
    }
}
