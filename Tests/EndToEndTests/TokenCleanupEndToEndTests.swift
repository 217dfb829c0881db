import Foundation
import Testing

/// The nightly clean-up's last step against real databases: a campaign sent to the mock, `prune --format csv`, and
/// `samples/cron/`'s SQL run as its header says on a seeded token table of a real PostgreSQL server (started here
/// as an unprivileged user on a private unix socket, stopped at the end) and of SQLite; then exactly which rows are
/// gone. And a campaign sent to the wrong environment: no row deleted.
@Suite("token clean-up against PostgreSQL and SQLite", .serialized)
struct TokenCleanupEndToEndTests {
    /// APNs's 410 timestamp for the dead tokens, in ms: 2026-01-01T00:00:00.123Z.
    static let diedAt: Int64 = 1_767_225_600_123
    static func token(_ last: String) -> String { String(repeating: "ab", count: 30) + last }

    /// Tokens of the campaign, and what the mock answers each.
    static let live = token("0001")
    static let dead = token("0002")
    static let reRegistered = token("0003")
    static let deadMixedCase = token("0004")
    static let bad = token("0005")
    static let reRegisteredSame = token("0006")

    /// The seeded rows: (id, token as the app stored it, topic, environment, registered at ms), and which must go.
    static func rows(environment: String) -> [(
        id: Int, token: String, topic: String, environment: String, registered: Int64
    )] {
        let before = diedAt - 1
        let other = "com.example.otherapp"
        return [
            (1, live, MockProcess.topic, environment, before),  // delivered: stays
            (2, dead, MockProcess.topic, environment, before),  // 410, registered 1 ms before: goes
            // registered again 1 ms after the 410: stays
            (3, reRegistered, MockProcess.topic, environment, diedAt + 1),
            (4, "<" + spaced(deadMixedCase.uppercased()) + ">", MockProcess.topic, environment, before),  // goes
            (5, bad, MockProcess.topic, environment, diedAt + 86_400_000),  // BadDeviceToken, no timestamp: goes
            (6, dead, other, environment, before),  // another app's row of the token: stays
            (7, dead, MockProcess.topic, environment == "development" ? "production" : "development", before),  // stays
            (8, reRegisteredSame, MockProcess.topic, environment, diedAt),  // registered at the 410's very ms: stays
            (9, dead.uppercased(), MockProcess.topic, environment, diedAt / 1000),  // the same moment in seconds: goes
        ]
    }

    static func spaced(_ hex: String) -> String {
        stride(from: 0, to: hex.count, by: 8).map { start in
            let from = hex.index(hex.startIndex, offsetBy: start)
            return String(hex[from..<(hex.index(from, offsetBy: 8, limitedBy: hex.endIndex) ?? hex.endIndex)])
        }.joined(separator: " ")
    }

    /// Sends the campaign to a mock whose registry says `registry`, and writes the prune CSV; returns its path.
    /// With `keep`, each record has a `device_id` and the send keeps it: the prune CSV has a `device_id` column after
    /// `results`, which the sample SQL loads (PostgreSQL, `-v kept_columns=`) or leaves out (SQLite).
    static func sendAndPrune(
        in directory: TemporaryDirectory, registry: String, keep: Bool = false, results resultsPath: String? = nil,
        expectStatus: (Int32) -> Bool
    ) throws -> String {
        let registryFile = directory.file("registry.txt")
        try registry.write(toFile: registryFile, atomically: true, encoding: .utf8)
        let campaign = directory.file("campaign.ndjson")
        let tokens = [live, dead, reRegistered, "<" + spaced(deadMixedCase.uppercased()) + ">", bad, reRegisteredSame]
        let lines = tokens.enumerated().map { index, token in
            #"{"token":"\#(token)","payload":{"aps":{"alert":"hello"}},"device_id":"dev-\#(index + 1)"}"#
        }
        try (lines.joined(separator: "\n") + "\n").write(toFile: campaign, atomically: true, encoding: .utf8)
        let log = directory.file("accepted.ndjson")
        let mock = try MockProcess(["--log-accepted", log, "--registry", registryFile, "--no-suffix-rules"])
        let results = resultsPath ?? directory.file("results.ndjson")
        let sent = try Tool.run(
            ["send", campaign, "--results", results] + (keep ? ["--keep", "device_id"] : []) + mock.clientArguments)
        #expect(expectStatus(sent.status), "exit \(sent.status): \(sent.stderr)")
        _ = try mock.stop()
        #expect(try AuditedCampaign.accepted(inLog: log).perToken.values.allSatisfy { $0 == 1 })
        let csv = directory.file("prune.csv")
        let pruned = try Tool.run(["prune", results, "--format", "csv", "--output", csv])
        #expect(pruned.status == 0, "exit \(pruned.status): \(pruned.stderr)")
        let header = try String(contentsOfFile: csv, encoding: .utf8).prefix { $0 != "\n" }
        #expect(header.hasSuffix(",results,device_id") == keep, "\(header)")
        return csv
    }

    static let deadRegistry = """
        unregistered \(dead) \(diedAt)
        unregistered \(reRegistered) \(diedAt)
        expired \(deadMixedCase) \(diedAt)
        unregistered \(reRegisteredSame) \(diedAt)
        bad \(bad)

        """

    @Test(
        "PostgreSQL: send, prune, cleanup-postgresql.sql: exactly the dead rows of this app and environment are deleted; soft delete marks the same rows"
    )
    func postgres() throws {
        let directory = try TemporaryDirectory()
        let csv = try Self.sendAndPrune(in: directory, registry: Self.deadRegistry, keep: true) { $0 != 4 && $0 != 1 }
        let server = try PostgresServer(in: directory)
        defer { server.stop() }
        for soft in [false, true] {
            let database = soft ? "soft" : "hard"
            try server.sql("CREATE DATABASE \(database)", database: "postgres")
            try Self.seedPostgres(server, database: database)
            let run = try server.psql(
                ["-v", "ON_ERROR_STOP=1", "-v", "kept_columns=device_id text"] + (soft ? ["-v", "soft_delete=on"] : [])
                    + ["-f", Tool.path("samples/cron/cleanup-postgresql.sql")], database: database, stdin: csv)
            #expect(run.status == 0, "\(run.stderr)")
            let query =
                soft
                ? "SELECT id FROM device_tokens WHERE deleted_at IS NULL ORDER BY id"
                : "SELECT id FROM device_tokens ORDER BY id"
            #expect(try server.ids(query, database: database) == [1, 3, 6, 7, 8], soft ? "soft delete" : "delete")
            if soft {
                #expect(try server.ids("SELECT id FROM device_tokens ORDER BY id", database: database).count == 9)
            }
        }
    }

    @Test(
        "SQLite: send, prune, cleanup-sqlite.sql: exactly the dead rows of this app and environment are deleted; soft delete marks the same rows"
    )
    func sqlite() throws {
        let directory = try TemporaryDirectory()
        let csv = try Self.sendAndPrune(in: directory, registry: Self.deadRegistry, keep: true) { $0 != 4 && $0 != 1 }
        for soft in [false, true] {
            let database = try Self.seedSQLite(
                in: directory, name: soft ? "soft.db" : "hard.db", environment: "127.0.0.1")
            let settings = soft ? "-cmd 'create temp table cleanup_settings as select 1 as soft_delete' " : ""
            let run = try RunFilesEndToEndTests.shell(
                "sqlite3 -bail \(settings)'\(database)' \".read '\(Tool.path("samples/cron/cleanup-sqlite.sql"))'\" < '\(csv)'"
            )
            #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")  // the kept column loads, silently
            let query =
                soft
                ? "SELECT id FROM device_tokens WHERE deleted_at_ms IS NULL ORDER BY id"
                : "SELECT id FROM device_tokens ORDER BY id"
            #expect(
                try Self.sqliteIDs(query, database: database, in: directory) == [1, 3, 6, 7, 8],
                soft ? "soft delete" : "delete")
        }
    }

    @Test(
        "the cron sample with DATABASE_URL and KEPT_COLUMNS: nightly-cleanup.sh loads its prune CSV into PostgreSQL with psql and deletes exactly the dead rows"
    )
    func cronWithDatabaseURL() throws {
        let directory = try TemporaryDirectory()
        let resultsDir = directory.file("results")
        try FileManager.default.createDirectory(atPath: resultsDir, withIntermediateDirectories: true)
        let day = "2026-11-30"
        _ = try Self.sendAndPrune(
            in: directory, registry: Self.deadRegistry, keep: true, results: resultsDir + "/\(day)-spring.ndjson"
        ) {
            $0 != 4 && $0 != 1
        }
        let server = try PostgresServer(in: directory)
        defer { server.stop() }
        try server.sql("CREATE DATABASE tokens", database: "postgres")
        try Self.seedPostgres(server, database: "tokens")
        // The script as cron runs it: settings from the env file (quoted as env.example says), psql from
        // DATABASE_URL (the server's private socket), nothing of the test's environment. Every record has its final
        // outcome, so its replay sends nothing and needs no connection: its endpoint is a port nothing listens on.
        let closedPort = try RunFilesEndToEndTests.closedPort(in: directory)
        let envFile = directory.file("env")
        let binDir = (Tool.binary as NSString).deletingLastPathComponent
        try Data(
            """
            APNS_KEY_FILE=\(MockProcess.keyFile)
            APNS_KEY_ID=\(MockProcess.keyID)
            APNS_TEAM_ID=\(MockProcess.teamID)
            APNS_TOPIC=\(MockProcess.topic)
            RESULTS_DIR=\(resultsDir)
            OUT_DIR=\(directory.file("prune"))
            DAY=\(day)
            APNS_ENDPOINT=https://127.0.0.1:\(closedPort)
            DATABASE_URL='postgresql:///tokens?host=\(server.root)&user=postgres'
            KEPT_COLUMNS="device_id text"
            PATH=\(binDir):/usr/bin:/bin

            """.utf8
        ).write(to: URL(fileURLWithPath: envFile))
        let log = directory.file("cleanup.log")
        let run = try RunFilesEndToEndTests.shell(
            "env -i APNS_BULK_ENV='\(envFile)' /bin/bash '\(Tool.path("samples/cron/nightly-cleanup.sh"))' > '\(log)' 2>&1"
        )
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(run.status == 0, "exit \(run.status): \(text.suffix(2000))")
        #expect(text.contains("dead tokens removed from PostgreSQL"), "\(text.suffix(2000))")
        #expect(try server.ids("SELECT id FROM device_tokens ORDER BY id", database: "tokens") == [1, 3, 6, 7, 8])
    }

    @Test(
        "a campaign sent to the wrong environment (every token BadDeviceToken): nothing pruned, no row deleted in PostgreSQL or SQLite"
    )
    func wrongEnvironment() throws {
        let directory = try TemporaryDirectory()
        let everyTokenBad =
            [Self.live, Self.dead, Self.reRegistered, Self.deadMixedCase, Self.bad, Self.reRegisteredSame]
            .map { "bad \($0)" }.joined(separator: "\n") + "\n"
        let csv = try Self.sendAndPrune(in: directory, registry: everyTokenBad) { $0 == 4 }
        let database = try Self.seedSQLite(in: directory, name: "tokens.db", environment: "127.0.0.1")
        let run = try RunFilesEndToEndTests.shell(
            "sqlite3 -bail '\(database)' \".read '\(Tool.path("samples/cron/cleanup-sqlite.sql"))'\" < '\(csv)'")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            try Self.sqliteIDs("SELECT id FROM device_tokens ORDER BY id", database: database, in: directory)
                == Array(1...9))

        let server = try PostgresServer(in: directory)
        defer { server.stop() }
        try Self.seedPostgres(server, database: "postgres")
        let cleaned = try server.psql(
            ["-v", "ON_ERROR_STOP=1", "-f", Tool.path("samples/cron/cleanup-postgresql.sql")],
            database: "postgres", stdin: csv)
        #expect(cleaned.status == 0, "\(cleaned.stderr)")
        #expect(try server.ids("SELECT id FROM device_tokens ORDER BY id", database: "postgres") == Array(1...9))
    }

    /// The token table in PostgreSQL, of `rows`, as the sample SQL's header expects it.
    static func seedPostgres(_ server: PostgresServer, database: String) throws {
        try server.sql(
            """
            CREATE TABLE device_tokens (id int, token text, topic text, environment text, registered_at timestamptz,
                                        deleted_at timestamptz);
            """
                + rows(environment: "127.0.0.1").map { row in
                    "INSERT INTO device_tokens VALUES (\(row.id), '\(row.token)', '\(row.topic)', '\(row.environment)', "
                        + "to_timestamp(\(row.registered) / 1000.0), NULL);"
                }.joined(separator: "\n"), database: database)
    }

    static func seedSQLite(in directory: TemporaryDirectory, name: String, environment: String) throws -> String {
        let database = directory.file(name)
        let seed = directory.file(name + ".sql")
        let sql =
            "CREATE TABLE device_tokens (id INTEGER, token TEXT, topic TEXT, environment TEXT, registered_at_ms INTEGER, deleted_at_ms INTEGER);\n"
            + rows(environment: environment).map { row in
                "INSERT INTO device_tokens VALUES (\(row.id), '\(row.token)', '\(row.topic)', '\(row.environment)', \(row.registered), NULL);"
            }.joined(separator: "\n")
        try sql.write(toFile: seed, atomically: true, encoding: .utf8)
        let made = try RunFilesEndToEndTests.shell("sqlite3 -bail '\(database)' < '\(seed)'")
        #expect(made.status == 0, "\(made.stderr)")
        return database
    }

    static func sqliteIDs(_ query: String, database: String, in directory: TemporaryDirectory) throws -> [Int] {
        let out = directory.file("query.out")
        let run = try RunFilesEndToEndTests.shell("sqlite3 -bail '\(database)' '\(query)' > '\(out)'")
        #expect(run.status == 0, "\(run.stderr)")
        return try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").compactMap { Int($0) }
    }
}

/// A PostgreSQL server of Debian's `postgresql` package for one test: `initdb` in a folder of the test's, started
/// with `pg_ctl` as the unprivileged `postgres` user (when the tests run as root; else as the tests' own user),
/// listening on a unix socket in that folder only (no TCP), stopped by `stop()`.
final class PostgresServer: @unchecked Sendable {
    let root: String
    let runAs: [String]

    static var binDirectory: String? {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        return versions.compactMap(Int.init).max().map { "/usr/lib/postgresql/\($0)/bin" }
    }

    init(in directory: TemporaryDirectory) throws {
        let bin = try #require(
            Self.binDirectory, "PostgreSQL is not installed (scripts/test.sh installs Debian's postgresql)")
        root = directory.file("postgres")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        runAs = getuid() == 0 ? ["runuser", "-u", "postgres", "--"] : []
        if getuid() == 0 {
            // The postgres user must reach the folder: the test's own, and the private TMPDIR above it (scripts/test.sh
            // makes one of mode 0700), which it may pass through but not list.
            let parent = (directory.path as NSString).deletingLastPathComponent
            _ = try RunFilesEndToEndTests.shell(
                "chown postgres '\(root)' && chmod 0755 '\(directory.path)' && chmod o+x '\(parent)'")
        }
        // The server outlives the shell that starts it: it must not hold the descriptors Foundation's Process
        // watches to see that shell end, so every one above standard error is closed first.
        let closeInherited =
            "for fd in $(ls /proc/$$/fd); do [ \"$fd\" -gt 2 ] && eval \"exec $fd>&-\"; done 2>/dev/null; "
        let start = try RunFilesEndToEndTests.shell(
            "exec bash -c "
                + Self.quoted(
                    closeInherited + words(["\(bin)/initdb", "-D", root + "/data", "-A", "trust", "-U", "postgres"])
                        + " > '\(root)/initdb.log' && "
                        + words([
                            "\(bin)/pg_ctl", "-D", root + "/data", "-l", root + "/server.log", "-w",
                            "-o", "-c listen_addresses='' -k \(root)", "start",
                        ])),
            timeout: 120 * Tool.timeScale)
        let log = (try? String(contentsOfFile: root + "/server.log", encoding: .utf8)) ?? ""
        try #require(start.status == 0, "PostgreSQL did not start: \(start.stderr) \(log)")
    }

    private func words(_ words: [String]) -> String { (runAs + words).map(Self.quoted).joined(separator: " ") }

    static func quoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    func psql(_ arguments: [String], database: String, stdin: String = "/dev/null", stdout: String = "/dev/null") throws
        -> Tool.Result
    {
        try RunFilesEndToEndTests.shell(
            words(["psql", "-X", "-q", "-h", root, "-U", "postgres", "-d", database] + arguments)
                + " < '\(stdin)' > '\(stdout)'")
    }

    func sql(_ text: String, database: String) throws {
        let file = root + "/statement.sql"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let run = try psql(["-v", "ON_ERROR_STOP=1", "-f", file], database: database)
        try #require(run.status == 0, "\(run.stderr)")
    }

    func ids(_ query: String, database: String) throws -> [Int] {
        let out = root + "/query.out"
        let run = try psql(["-At", "-c", query], database: database, stdout: out)
        try #require(run.status == 0, "\(run.stderr)")
        return try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").compactMap { Int($0) }
    }

    func stop() {
        guard let bin = Self.binDirectory else { return }
        _ = try? RunFilesEndToEndTests.shell(
            words(["\(bin)/pg_ctl", "-D", root + "/data", "-m", "fast", "-w", "stop"]))
    }
}

/// What `prune` prints about where tokens come from and what it holds back, run as a user would.
@Suite("prune's columns, confirmation and --after end to end", .serialized)
struct PruneSourcesEndToEndTests {
    @Test(
        "a real send: the CSV's columns, the environment from the campaign record; --after in ISO 8601 to the millisecond"
    )
    func columnsAndAfter() throws {
        let directory = try TemporaryDirectory()
        let csv = try TokenCleanupEndToEndTests.sendAndPrune(
            in: directory, registry: TokenCleanupEndToEndTests.deadRegistry
        ) { $0 != 4 && $0 != 1 }
        let manifest = try String(contentsOfFile: directory.file("results.ndjson.campaign"), encoding: .utf8)
        #expect(manifest.contains(#""environment" : "127.0.0.1""#), "\(manifest)")
        let lines = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.first == "token,reason,timestamp,topic,environment,timestamp_iso,campaign,results")
        let dead = try #require(lines.first { $0.hasPrefix(TokenCleanupEndToEndTests.dead) })
        #expect(
            dead == "\(TokenCleanupEndToEndTests.dead),Unregistered,1767225600123,\(MockProcess.topic),127.0.0.1,"
                + "2026-01-01T00:00:00.123Z,\(directory.file("campaign.ndjson")),\(directory.file("results.ndjson"))")
        let results = directory.file("results.ndjson")
        let after = try Tool.run(["prune", results, "--after", "2026-01-01T00:00:00.123Z"])
        #expect(
            after.status == 0 && after.stdout == TokenCleanupEndToEndTests.bad + "\n", "\(after.stdout) \(after.stderr)"
        )
        let before = try Tool.run(["prune", results, "--after", "2026-01-01"])
        #expect(before.stdout.split(separator: "\n").count == 5, "\(before.stdout)")
        let refused = try Tool.run(["prune", results, "--after", "2026-01-01T00:00:00"])
        #expect(refused.status == 64 && refused.stderr.contains("ISO 8601"), "\(refused.stderr)")
    }

    @Test(
        "lines of an older version: BadDeviceToken with nothing of its topic delivered is held back with one line; --include-unconfirmed lists it"
    )
    func heldBack() throws {
        let directory = try TemporaryDirectory()
        let results = directory.file("old.ndjson")
        let token = String(repeating: "cd", count: 32)
        try """
        {"file":"c.ndjson","line":1,"token":"\(token)","topic":"com.a","outcome":"prune","status":400,"reason":"BadDeviceToken","attempts":1}
        {"file":"c.ndjson","line":2,"token":"\(token.dropLast(2))aa","topic":"com.b","outcome":"delivered","status":200,"attempts":1}

        """.write(toFile: results, atomically: true, encoding: .utf8)
        let held = try Tool.run(["prune", results])
        #expect(held.status == 0 && held.stdout.isEmpty, "\(held.stdout)")
        #expect(
            held.stderr.contains("held back 1 token called bad")
                && held.stderr.contains("--include-unconfirmed lists them"), "\(held.stderr)")
        let listed = try Tool.run(["prune", results, "--include-unconfirmed"])
        #expect(listed.status == 0 && listed.stdout == token + "\n", "\(listed.stdout) \(listed.stderr)")
        // The report counts what prune lists: none, and proposes no prune.
        let json = directory.file("report.json")
        let report = try Tool.run(["report", results, "--json", json])
        let figures = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
        #expect(report.status == 0 && figures["tokens_to_prune"] as? Int == 0, "\(figures)")
        #expect((figures["next_steps"] as? [String: Any])?["prune"] == nil, "\(figures)")
    }
}
