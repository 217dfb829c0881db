import Foundation
import Testing

/// `--metrics` files as the tools beside apns-bulk read them: `promtool check metrics` (Debian's `prometheus`)
/// finds nothing to say, and Debian's `prometheus-node-exporter`, running as an unprivileged user with its textfile
/// collector pointed at two shards' files, serves every series with no scrape error. `scripts/test.sh` installs
/// both; without them these tests are skipped.
@Suite("metrics end to end", .serialized)
struct MetricsEndToEndTests {
    static let promtool = "/usr/bin/promtool"
    static let nodeExporter = "/usr/bin/prometheus-node-exporter"

    /// Sends a campaign as two shards with `--metrics` into `folder`; returns the two metrics files.
    static func twoShards(into folder: String, mock: MockProcess, work: TemporaryDirectory) throws -> [String] {
        let campaign = work.file("c.ndjson")
        try SendEndToEndTests.shell(
            "python3 '\(Tool.path("scripts/gen-campaign.py"))' --records 400 --dead 0.02 --out '\(campaign)'")
        var files: [String] = []
        for shard in 0..<2 {
            let metrics = (folder as NSString).appendingPathComponent("spring-\(shard).prom")
            let run = try Tool.run(
                [
                    "send", campaign, "--shard", "\(shard)/2", "--results", work.file("spring-\(shard).ndjson"),
                    "--metrics", metrics,
                ] + mock.clientArguments)
            #expect(run.status == 0, "exit \(run.status): \(run.stderr)")
            files.append(metrics)
        }
        return files
    }

    @Test(
        "promtool check metrics accepts every file; files are readable by others, written whole, labelled by campaign and shard",
        .enabled(if: FileManager.default.isExecutableFile(atPath: promtool)))
    func promtoolAccepts() throws {
        let mock = try MockProcess()
        let work = try TemporaryDirectory()
        let files = try Self.twoShards(into: work.path, mock: mock, work: work)
        for file in files {
            let check = try RunFilesEndToEndTests.shell("'\(Self.promtool)' check metrics < '\(file)'")
            #expect(check.status == 0 && check.stderr.isEmpty, "promtool on \(file): \(check.stderr)")
            let mode = (try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int) ?? 0
            #expect(mode & 0o044 == 0o044, "node_exporter's user cannot read it: \(String(mode, radix: 8))")
            let text = try String(contentsOfFile: file, encoding: .utf8)
            #expect(text.contains("# TYPE apns_bulk_records_total counter"))
            #expect(text.contains("# TYPE apns_bulk_request_latency_seconds summary"))
            #expect(text.contains("apns_bulk_last_run_end_timestamp_seconds{campaign=\"spring-"))
            #expect(text.contains("apns_bulk_last_success_timestamp_seconds{campaign=\"spring-"))
        }
        #expect(try String(contentsOfFile: files[1], encoding: .utf8).contains(#"shard="1/2""#))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: work.path).filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty, "\(leftovers)")
        // The result files, which hold device tokens, stay private.
        let results =
            (try FileManager.default.attributesOfItem(atPath: work.file("spring-0.ndjson"))[.posixPermissions] as? Int)
            ?? 0
        #expect(results & 0o077 == 0)
        _ = try mock.stop()
    }

    @Test(
        "node_exporter's textfile collector, as an unprivileged user, serves both shards' series with no scrape error",
        .enabled(if: FileManager.default.isExecutableFile(atPath: nodeExporter)))
    func nodeExporterScrapes() throws {
        let mock = try MockProcess()
        let work = try TemporaryDirectory()
        // A folder node_exporter's user can reach (the test's own temporary folder is private).
        let folder = "/tmp/apns-bulk-textfile-\(UUID().uuidString)"
        try FileManager.default.createDirectory(
            atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = try Self.twoShards(into: folder, mock: mock, work: work)
        _ = try mock.stop()

        let port = 20_000 + Int.random(in: 0..<30_000)
        let exporter = Process()
        // setpriv execs node_exporter itself as nobody (runuser would stay between, as its parent).
        exporter.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        exporter.arguments = [
            "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--",
            Self.nodeExporter, "--web.listen-address=127.0.0.1:\(port)",
            "--collector.disable-defaults", "--collector.textfile",
            "--collector.textfile.directory=\(folder)",
        ]
        let log = work.file("node_exporter.log")
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        exporter.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        exporter.standardOutput = FileHandle.nullDevice
        try exporter.run()
        defer {
            kill(exporter.processIdentifier, SIGKILL)
            exporter.waitUntilExit()
        }
        var page = ""
        for _ in 0..<100 {
            let scrape = try RunFilesEndToEndTests.shell(
                "curl -sf http://127.0.0.1:\(port)/metrics > '\(work.file("page"))'")
            if scrape.status == 0, let text = try? String(contentsOfFile: work.file("page"), encoding: .utf8),
                !text.isEmpty
            {
                page = text
                break
            }
            usleep(100_000)
        }
        let logText = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(!page.isEmpty, "no scrape: \(logText)")
        #expect(
            page.contains("node_textfile_scrape_error 0"),
            "\(page.split(separator: "\n").filter { $0.contains("textfile") })")
        for shard in ["0/2", "1/2"] {
            #expect(
                page.contains(
                    "apns_bulk_records_total{campaign=\"spring-\(shard.prefix(1))\",outcome=\"delivered\",shard=\"\(shard)\"}"
                ),
                "shard \(shard) missing")
        }
        #expect(page.contains("apns_bulk_last_success_timestamp_seconds{"))
        #expect(!logText.contains("collected before"), "\(logText)")
    }
}
