import Foundation
import Testing

/// `--pushgateway` against Debian's `prometheus-pushgateway`, started here on a free local port: two shards of one
/// campaign push their series (job, campaign, shard; no instance but the gateway's empty one) and `promtool check
/// metrics` accepts the gateway's page; a later run that stops early keeps the last success a finished run pushed;
/// a gateway that is down or does not answer costs one warning line and never the exit status. Without the
/// gateway binary these tests are skipped.
@Suite("pushgateway end to end", .serialized)
struct PushgatewayEndToEndTests {
    static let gatewayBinary = "/usr/bin/prometheus-pushgateway"
    static let promtool = "/usr/bin/promtool"
    static let available = FileManager.default.isExecutableFile(atPath: gatewayBinary)
    static let skipped: Comment = "needs Debian's prometheus-pushgateway (/usr/bin/prometheus-pushgateway)"

    /// The basic-authentication user and password of the TLS gateway (generated test material: the hash below is
    /// bcrypt of this password, made with Python's `crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH,
    /// rounds=1 << 10))`; it protects nothing).
    static let gatewayUser = "ops"
    static let gatewayPassword = "test-only-gateway-password"
    static let gatewayPasswordHash = "$2b$10$w6odwKG7fQklpapq.UNs6eblyOFvX0SqKwMw2F5KXF7UKf8zf65l."

    /// A Pushgateway process on 127.0.0.1, stopped by its pid; with `secured`, behind TLS (the test server
    /// certificate for 127.0.0.1 from Tests/Fixtures/tls) and basic authentication, set by `--web.config.file`.
    final class Gateway {
        let process = Process()
        let port: Int
        let secured: Bool
        var url: String { "\(secured ? "https" : "http")://127.0.0.1:\(port)" }
        static let caFile = Tool.path("Tests/Fixtures/tls/root-ca.pem")

        init(work: TemporaryDirectory, secured: Bool = false) throws {
            port = try PushgatewayEndToEndTests.freePort()
            self.secured = secured
            process.executableURL = URL(fileURLWithPath: PushgatewayEndToEndTests.gatewayBinary)
            process.arguments = [
                "--web.listen-address=127.0.0.1:\(port)", "--persistence.file=\(work.file("gateway.persist"))",
            ]
            if secured {
                let config = """
                    tls_server_config:
                      cert_file: \(Tool.path("Tests/Fixtures/tls/server-chain.pem"))
                      key_file: \(Tool.path("Tests/Fixtures/tls/server.key"))
                    basic_auth_users:
                      \(PushgatewayEndToEndTests.gatewayUser): '\(PushgatewayEndToEndTests.gatewayPasswordHash)'

                    """
                try config.write(toFile: work.file("web.yml"), atomically: true, encoding: .utf8)
                process.arguments? += ["--web.config.file=\(work.file("web.yml"))"]
            }
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            for _ in 0..<100 where (try? page(path: "/-/ready")) == nil { usleep(100_000) }
        }

        /// GETs `path` from the gateway (nil: no answer), with the CA and the credentials when secured.
        func page(path: String = "/metrics") throws -> String? {
            let out = try TemporaryDirectory()
            let access =
                secured
                ? "--cacert '\(Self.caFile)' -u '\(PushgatewayEndToEndTests.gatewayUser):\(PushgatewayEndToEndTests.gatewayPassword)' "
                : ""
            let fetched = try RunFilesEndToEndTests.shell("curl -sf \(access)\(url)\(path) > '\(out.file("page"))'")
            guard fetched.status == 0 else { return nil }
            return try String(contentsOfFile: out.file("page"), encoding: .utf8)
        }

        func stop() {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
    }

    /// A port nothing listens on now (bound to port 0 and closed again).
    static func freePort() throws -> Int {
        let (fd, port) = try loopbackSocket(listening: false)
        close(fd)
        return port
    }

    /// A TCP socket bound to 127.0.0.1 on a port the kernel picks, listening if asked (a listener that never
    /// accepts); the caller closes it.
    static func loopbackSocket(listening: Bool) throws -> (descriptor: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && (!listening || listen(fd, 8) == 0) && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw MockStartError(log: "could not bind a socket on 127.0.0.1")
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// The value of the sample whose line starts with `prefix` on `page`.
    static func value(_ prefix: String, on page: String) -> Double? {
        page.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { $0.split(separator: " ").last }.flatMap {
            Double($0)
        }
    }

    static func series(_ name: String, campaign: String = "spring", shard: String) -> String {
        "\(name){campaign=\"\(campaign)\",instance=\"\",job=\"apns-bulk\",shard=\"\(shard)\"} "
    }

    @Test(
        "two shards push job, campaign and shard; promtool accepts the page; a run stopped early keeps the last success",
        .enabled(if: available, skipped))
    func twoShardsThenStopped() throws {
        let work = try TemporaryDirectory()
        let gateway = try Gateway(work: work)
        defer { gateway.stop() }
        let mock = try MockProcess()
        let campaign = work.file("c.ndjson")
        try SendEndToEndTests.shell(
            "python3 '\(Tool.path("scripts/gen-campaign.py"))' --records 200 --out '\(campaign)'")
        for shard in 0..<2 {
            let run = try Tool.run(
                [
                    "send", campaign, "--shard", "\(shard)/2", "--results", work.file("spring-\(shard).ndjson"),
                    "--metrics-label", "spring", "--pushgateway", gateway.url,
                ] + mock.clientArguments)
            #expect(run.status == 0, "exit \(run.status): \(run.stderr)")
            #expect(!run.stderr.contains("warning"), "\(run.stderr)")
        }
        let page = try #require(try gateway.page(), "the gateway did not answer")
        var delivered = 0.0
        for shard in ["0/2", "1/2"] {
            let series =
                "apns_bulk_records_total{campaign=\"spring\",instance=\"\",job=\"apns-bulk\",outcome=\"delivered\",shard=\"\(shard)\"}"
            let value = Self.value(series + " ", on: page)
            #expect(
                (value ?? 0) > 0,
                "shard \(shard): \(page.split(separator: "\n").filter { $0.hasPrefix("apns_bulk_records_total") })")
            delivered += value ?? 0
            #expect(Self.value(Self.series("apns_bulk_last_success_timestamp_seconds", shard: shard), on: page) != nil)
        }
        #expect(delivered == 200)
        let instances = page.split(separator: "\n").filter {
            $0.hasPrefix("apns_bulk") && $0.contains("instance=") && !$0.contains("instance=\"\"")
        }
        #expect(instances.isEmpty, "\(instances)")
        if FileManager.default.isExecutableFile(atPath: Self.promtool) {
            let saved = work.file("page.txt")
            try page.write(toFile: saved, atomically: true, encoding: .utf8)
            let check = try RunFilesEndToEndTests.shell("'\(Self.promtool)' check metrics < '\(saved)'")
            #expect(check.status == 0 && check.stderr.isEmpty, "promtool: \(check.stderr)")
        }

        // Shard 0 again with a wrong topic (its own result file): stopped early (4), its last success kept.
        let lastSuccess = Self.value(Self.series("apns_bulk_last_success_timestamp_seconds", shard: "0/2"), on: page)
        let lastEnd = Self.value(Self.series("apns_bulk_last_run_end_timestamp_seconds", shard: "0/2"), on: page)
        var arguments =
            ["send", campaign, "--shard", "0/2", "--results", work.file("wrong-0.ndjson"), "--metrics-label", "spring"]
            + mock.clientArguments
        if let topic = arguments.firstIndex(of: "--topic") { arguments[topic + 1] = "com.wrong.app" }
        let stopped = try Tool.run(arguments, environment: ["APNS_PUSHGATEWAY": gateway.url])
        #expect(stopped.status == 4, "exit \(stopped.status): \(stopped.stderr)")
        #expect(!stopped.stderr.contains("warning"), "\(stopped.stderr)")
        let after = try #require(try gateway.page(), "the gateway did not answer")
        #expect(Self.value(Self.series("apns_bulk_stopped_early", shard: "0/2"), on: after) == 1)
        #expect(
            Self.value(Self.series("apns_bulk_last_success_timestamp_seconds", shard: "0/2"), on: after) == lastSuccess)
        let newEnd = Self.value(Self.series("apns_bulk_last_run_end_timestamp_seconds", shard: "0/2"), on: after)
        #expect(newEnd != nil && newEnd != lastEnd, "the stopped run's end was not pushed")
        #expect(Self.value(Self.series("apns_bulk_stopped_early", shard: "1/2"), on: after) == 0)
        _ = try mock.stop()
    }

    @Test(
        "a gateway that is down, or that never answers: the run's exit status, one warning line, at most about 5 s more",
        .enabled(if: available, skipped))
    func gatewayDown() throws {
        let work = try TemporaryDirectory()
        let mock = try MockProcess()
        let campaign = work.file("c.ndjson")
        try SendEndToEndTests.shell(
            "python3 '\(Tool.path("scripts/gen-campaign.py"))' --records 50 --out '\(campaign)'")
        let down = "http://127.0.0.1:\(try Self.freePort())"
        let refused = try Tool.run(
            ["send", campaign, "--results", work.file("a.ndjson"), "--pushgateway", down] + mock.clientArguments)
        #expect(refused.status == 0, "exit \(refused.status): \(refused.stderr)")
        let warnings = refused.stderr.split(separator: "\n").filter { $0.contains("warning") }
        #expect(
            warnings.count == 1
                && warnings.first?.hasPrefix("apns-bulk: warning: could not push metrics to \(down): ") == true,
            "\(refused.stderr)")

        // A listener that never accepts nor answers: the push gives up after its timeout.
        let (fd, port) = try Self.loopbackSocket(listening: true)
        defer { close(fd) }
        let silent = "http://127.0.0.1:\(port)"
        let started = Date()
        let waited = try Tool.run(
            ["send", campaign, "--results", work.file("b.ndjson"), "--pushgateway", silent]
                + mock.clientArguments, environment: ["APNS_PUSHGATEWAY": "http://127.0.0.1:1"])
        let elapsed = Date().timeIntervalSince(started)
        #expect(waited.status == 0, "exit \(waited.status): \(waited.stderr)")
        #expect(
            waited.stderr.contains("apns-bulk: warning: could not push metrics to \(silent): timed out"),
            "\(waited.stderr)")
        #expect(elapsed > 4.5 && elapsed < 30 * Tool.timeScale, "\(elapsed) s")
        _ = try mock.stop()
    }

    @Test(
        "a gateway behind TLS and basic auth: pushed with its CA, the user and the password from a file or the environment; a wrong password, no CA file, plain http: one warning each, exit 0",
        .enabled(if: available, skipped))
    func securedGateway() throws {
        let work = try TemporaryDirectory()
        let gateway = try Gateway(work: work, secured: true)
        defer { gateway.stop() }
        #expect(try gateway.page(path: "/-/ready") != nil, "the TLS gateway did not start")
        let mock = try MockProcess()
        let campaign = work.file("c.ndjson")
        try SendEndToEndTests.shell(
            "python3 '\(Tool.path("scripts/gen-campaign.py"))' --records 40 --out '\(campaign)'")
        try (Self.gatewayPassword + "\n").write(toFile: work.file("password"), atomically: true, encoding: .utf8)
        let secured = [
            "--pushgateway", gateway.url, "--pushgateway-ca-file", Gateway.caFile, "--pushgateway-user",
            Self.gatewayUser,
        ]

        let fromFile = try Tool.run(
            ["send", campaign, "--results", work.file("file.ndjson"), "--metrics-label", "fromfile"]
                + secured + ["--pushgateway-password-file", work.file("password")] + mock.clientArguments)
        #expect(
            fromFile.status == 0 && !fromFile.stderr.contains("warning"), "exit \(fromFile.status): \(fromFile.stderr)")
        let fromEnvironment = try Tool.run(
            ["send", campaign, "--results", work.file("env.ndjson"), "--metrics-label", "fromenv"]
                + mock.clientArguments,
            environment: [
                "APNS_PUSHGATEWAY": gateway.url, "APNS_PUSHGATEWAY_USER": Self.gatewayUser,
                "APNS_PUSHGATEWAY_PASSWORD": Self.gatewayPassword,
            ])
        // No CA file given: the system store does not trust the test CA.
        #expect(fromEnvironment.status == 0, "exit \(fromEnvironment.status): \(fromEnvironment.stderr)")
        #expect(
            fromEnvironment.stderr.contains("apns-bulk: warning: could not push metrics to \(gateway.url): "),
            "\(fromEnvironment.stderr)")
        let trusted = try Tool.run(
            [
                "send", campaign, "--results", work.file("env2.ndjson"), "--metrics-label", "fromenv",
                "--pushgateway-ca-file", Gateway.caFile,
            ] + mock.clientArguments,
            environment: [
                "APNS_PUSHGATEWAY": gateway.url, "APNS_PUSHGATEWAY_USER": Self.gatewayUser,
                "APNS_PUSHGATEWAY_PASSWORD": Self.gatewayPassword,
            ])
        #expect(trusted.status == 0 && !trusted.stderr.contains("warning"), "exit \(trusted.status): \(trusted.stderr)")
        let page = try #require(try gateway.page(), "the gateway did not answer")
        for label in ["fromfile", "fromenv"] {
            let series =
                "apns_bulk_records_total{campaign=\"\(label)\",instance=\"\",job=\"apns-bulk\",outcome=\"delivered\",shard=\"all\"} "
            #expect(
                Self.value(series, on: page) == 40,
                "\(label): \(page.split(separator: "\n").filter { $0.contains(label) }.prefix(3))")
        }

        let wrong = try Tool.run(
            ["send", campaign, "--results", work.file("wrong.ndjson")] + secured + mock.clientArguments,
            environment: ["APNS_PUSHGATEWAY_PASSWORD": "not-the-password"])
        #expect(wrong.status == 0, "exit \(wrong.status): \(wrong.stderr)")
        let warnings = wrong.stderr.split(separator: "\n").filter { $0.contains("warning") }
        #expect(warnings.count == 1 && warnings.first?.contains("HTTP 401") == true, "\(wrong.stderr)")
        #expect(!wrong.stderr.contains("not-the-password"))

        let plain = try Tool.run(
            [
                "send", campaign, "--results", work.file("plain.ndjson"), "--pushgateway",
                "http://127.0.0.1:\(gateway.port)",
            ] + mock.clientArguments)
        #expect(
            plain.status == 0 && plain.stderr.contains("apns-bulk: warning: could not push metrics"), "\(plain.stderr)")
        _ = try mock.stop()
    }

    @Test(
        "--pushgateway-interval pushes the figures so far while the run goes on (in progress 1, no last success), then the end (in progress 0, the last success)",
        .enabled(if: available, skipped))
    func pushesDuringTheRun() throws {
        let work = try TemporaryDirectory()
        let gateway = try Gateway(work: work)
        defer { gateway.stop() }
        let mock = try MockProcess()
        let campaign = work.file("c.ndjson")
        try SendEndToEndTests.shell(
            "python3 '\(Tool.path("scripts/gen-campaign.py"))' --records 300 --out '\(campaign)'")
        let run = Process()
        run.executableURL = URL(fileURLWithPath: Tool.binary)
        run.arguments =
            [
                "send", campaign, "--results", work.file("slow.ndjson"), "--metrics-label", "slow", "--rate", "60",
                "--pushgateway", gateway.url, "--pushgateway-interval", "1s",
            ] + mock.clientArguments
        _ = FileManager.default.createFile(atPath: work.file("stderr"), contents: nil)
        run.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: work.file("stderr")))
        try run.run()
        let inProgress = Self.series("apns_bulk_run_in_progress", campaign: "slow", shard: "all")
        let delivered =
            "apns_bulk_records_total{campaign=\"slow\",instance=\"\",job=\"apns-bulk\",outcome=\"delivered\",shard=\"all\"} "
        var seenDuring: (delivered: Double, lastSuccess: Double?)?
        let started = Date()
        while run.isRunning, Date().timeIntervalSince(started) < 60 * Tool.timeScale {
            if let page = try gateway.page(), Self.value(inProgress, on: page) == 1,
                let count = Self.value(delivered, on: page), count > 0
            {
                seenDuring = (
                    count,
                    Self.value(
                        Self.series("apns_bulk_last_success_timestamp_seconds", campaign: "slow", shard: "all"),
                        on: page)
                )
                break
            }
            usleep(200_000)
        }
        run.waitUntilExit()
        let stderr = try String(contentsOfFile: work.file("stderr"), encoding: .utf8)
        #expect(run.terminationStatus == 0 && !stderr.contains("warning"), "exit \(run.terminationStatus): \(stderr)")
        let during = try #require(seenDuring, "no push seen while the run went on")
        #expect(during.delivered < 300 && during.lastSuccess == nil, "\(during)")
        let page = try #require(try gateway.page(), "the gateway did not answer")
        #expect(Self.value(inProgress, on: page) == 0)
        #expect(Self.value(delivered, on: page) == 300)
        #expect(
            Self.value(
                Self.series("apns_bulk_last_success_timestamp_seconds", campaign: "slow", shard: "all"), on: page)
                != nil)
        _ = try mock.stop()
    }

    @Test(
        "samples/k8s/alerts.yaml passes promtool check rules; indexed-job.yaml pushes from every pod",
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: promtool), "needs Debian's prometheus (/usr/bin/promtool)")
    )
    func sampleRules() throws {
        let check = try RunFilesEndToEndTests.shell(
            "'\(Self.promtool)' check rules '\(Tool.path("samples/k8s/alerts.yaml"))'")
        #expect(check.status == 0, "promtool: \(check.stderr)")
        let rules = try String(contentsOfFile: Tool.path("samples/k8s/alerts.yaml"), encoding: .utf8)
        #expect(rules.contains("apns_bulk_last_success_timestamp_seconds") && rules.contains("26 * 3600"))
        let job = try String(contentsOfFile: Tool.path("samples/k8s/indexed-job.yaml"), encoding: .utf8)
        #expect(job.contains("name: APNS_PUSHGATEWAY") && job.contains("--metrics-label"))
        // Credentials from a secret, never in the URL (the tool refuses them there).
        #expect(job.contains("name: APNS_PUSHGATEWAY_PASSWORD") && job.contains("secretKeyRef: {name: pushgateway"))
        #expect(
            !job.contains("://")
                || !job.split(separator: "\n").contains { $0.contains("APNS_PUSHGATEWAY,") && $0.contains("@") })
        #expect(rules.contains("apns_bulk_run_in_progress") && job.contains("APNS_PUSHGATEWAY_INTERVAL"))
    }
}
