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

    /// A Pushgateway process on 127.0.0.1, stopped by its pid.
    final class Gateway {
        let process = Process()
        let port: Int
        var url: String { "http://127.0.0.1:\(port)" }

        init(work: TemporaryDirectory) throws {
            port = try PushgatewayEndToEndTests.freePort()
            process.executableURL = URL(fileURLWithPath: PushgatewayEndToEndTests.gatewayBinary)
            process.arguments = ["--web.listen-address=127.0.0.1:\(port)", "--persistence.file=\(work.file("gateway.persist"))"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            for _ in 0..<100 where (try? page(path: "/-/ready")) == nil { usleep(100_000) }
        }

        /// GETs `path` from the gateway (nil: no answer).
        func page(path: String = "/metrics") throws -> String? {
            let out = try TemporaryDirectory()
            let fetched = try RunFilesEndToEndTests.shell("curl -sf http://127.0.0.1:\(port)\(path) > '\(out.file("page"))'")
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
        page.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }
    }

    static func series(_ name: String, shard: String) -> String {
        "\(name){campaign=\"spring\",instance=\"\",job=\"apns-bulk\",shard=\"\(shard)\"} "
    }

    @Test("two shards push job, campaign and shard; promtool accepts the page; a run stopped early keeps the last success",
          .enabled(if: available, skipped))
    func twoShardsThenStopped() throws {
        let work = try TemporaryDirectory()
        let gateway = try Gateway(work: work)
        defer { gateway.stop() }
        let mock = try MockProcess()
        let campaign = work.file("c.ndjson")
        try SendEndToEndTests.shell("python3 '\(Tool.path("scripts/gen-campaign.py"))' --records 200 --out '\(campaign)'")
        for shard in 0..<2 {
            let run = try Tool.run(["send", campaign, "--shard", "\(shard)/2", "--results", work.file("spring-\(shard).ndjson"),
                                    "--metrics-label", "spring", "--pushgateway", gateway.url] + mock.clientArguments)
            #expect(run.status == 0, "exit \(run.status): \(run.stderr)")
            #expect(!run.stderr.contains("warning"), "\(run.stderr)")
        }
        let page = try #require(try gateway.page(), "the gateway did not answer")
        var delivered = 0.0
        for shard in ["0/2", "1/2"] {
            let series = "apns_bulk_records_total{campaign=\"spring\",instance=\"\",job=\"apns-bulk\",outcome=\"delivered\",shard=\"\(shard)\"}"
            let value = Self.value(series + " ", on: page)
            #expect((value ?? 0) > 0, "shard \(shard): \(page.split(separator: "\n").filter { $0.hasPrefix("apns_bulk_records_total") })")
            delivered += value ?? 0
            #expect(Self.value(Self.series("apns_bulk_last_success_timestamp_seconds", shard: shard), on: page) != nil)
        }
        #expect(delivered == 200)
        let instances = page.split(separator: "\n").filter { $0.hasPrefix("apns_bulk") && $0.contains("instance=") && !$0.contains("instance=\"\"") }
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
        var arguments = ["send", campaign, "--shard", "0/2", "--results", work.file("wrong-0.ndjson"), "--metrics-label", "spring"]
            + mock.clientArguments
        if let topic = arguments.firstIndex(of: "--topic") { arguments[topic + 1] = "com.wrong.app" }
        let stopped = try Tool.run(arguments, environment: ["APNS_PUSHGATEWAY": gateway.url])
        #expect(stopped.status == 4, "exit \(stopped.status): \(stopped.stderr)")
        #expect(!stopped.stderr.contains("warning"), "\(stopped.stderr)")
        let after = try #require(try gateway.page(), "the gateway did not answer")
        #expect(Self.value(Self.series("apns_bulk_stopped_early", shard: "0/2"), on: after) == 1)
        #expect(Self.value(Self.series("apns_bulk_last_success_timestamp_seconds", shard: "0/2"), on: after) == lastSuccess)
        let newEnd = Self.value(Self.series("apns_bulk_last_run_end_timestamp_seconds", shard: "0/2"), on: after)
        #expect(newEnd != nil && newEnd != lastEnd, "the stopped run's end was not pushed")
        #expect(Self.value(Self.series("apns_bulk_stopped_early", shard: "1/2"), on: after) == 0)
        _ = try mock.stop()
    }

    @Test("a gateway that is down, or that never answers: the run's exit status, one warning line, at most about 5 s more",
          .enabled(if: available, skipped))
    func gatewayDown() throws {
        let work = try TemporaryDirectory()
        let mock = try MockProcess()
        let campaign = work.file("c.ndjson")
        try SendEndToEndTests.shell("python3 '\(Tool.path("scripts/gen-campaign.py"))' --records 50 --out '\(campaign)'")
        let down = "http://127.0.0.1:\(try Self.freePort())"
        let refused = try Tool.run(["send", campaign, "--results", work.file("a.ndjson"), "--pushgateway", down] + mock.clientArguments)
        #expect(refused.status == 0, "exit \(refused.status): \(refused.stderr)")
        let warnings = refused.stderr.split(separator: "\n").filter { $0.contains("warning") }
        #expect(warnings.count == 1 && warnings.first?.hasPrefix("apns-bulk: warning: could not push metrics to \(down): ") == true,
                "\(refused.stderr)")

        // A listener that never accepts nor answers: the push gives up after its timeout.
        let (fd, port) = try Self.loopbackSocket(listening: true)
        defer { close(fd) }
        let silent = "http://127.0.0.1:\(port)"
        let started = Date()
        let waited = try Tool.run(["send", campaign, "--results", work.file("b.ndjson"), "--pushgateway", silent]
                                  + mock.clientArguments, environment: ["APNS_PUSHGATEWAY": "http://127.0.0.1:1"])
        let elapsed = Date().timeIntervalSince(started)
        #expect(waited.status == 0, "exit \(waited.status): \(waited.stderr)")
        #expect(waited.stderr.contains("apns-bulk: warning: could not push metrics to \(silent): timed out"), "\(waited.stderr)")
        #expect(elapsed > 4.5 && elapsed < 30 * Tool.timeScale, "\(elapsed) s")
        _ = try mock.stop()
    }

    @Test("samples/k8s/alerts.yaml passes promtool check rules; indexed-job.yaml pushes from every pod",
          .enabled(if: FileManager.default.isExecutableFile(atPath: promtool), "needs Debian's prometheus (/usr/bin/promtool)"))
    func sampleRules() throws {
        let check = try RunFilesEndToEndTests.shell("'\(Self.promtool)' check rules '\(Tool.path("samples/k8s/alerts.yaml"))'")
        #expect(check.status == 0, "promtool: \(check.stderr)")
        let rules = try String(contentsOfFile: Tool.path("samples/k8s/alerts.yaml"), encoding: .utf8)
        #expect(rules.contains("apns_bulk_last_success_timestamp_seconds") && rules.contains("26 * 3600"))
        let job = try String(contentsOfFile: Tool.path("samples/k8s/indexed-job.yaml"), encoding: .utf8)
        #expect(job.contains("name: APNS_PUSHGATEWAY") && job.contains("--metrics-label"))
    }
}
