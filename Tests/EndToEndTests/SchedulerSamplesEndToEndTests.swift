import Foundation
import Testing

/// The samples run as their schedulers run them, against the mock with its log of accepted notifications:
/// `samples/k8s/indexed-job.yaml`'s pod script under the Job controller's rules (its podFailurePolicy and
/// backoffLimitPerIndex, read from the file), with a kill -9 and retries after success, and
/// `samples/cron/`'s crontab line in cron's bare environment, twice a day and after a crash.
@Suite("scheduler samples end to end", .serialized)
struct SchedulerSamplesEndToEndTests {
    @Test(
        "the Indexed Job's pod: kill -9, then three more tries; every record accepted once at most, one final line each"
    )
    func kubernetesPodRetries() throws {
        let job = try String(contentsOfFile: Tool.path("samples/k8s/indexed-job.yaml"), encoding: .utf8)
        let script = try #require(Self.blockScalar(after: "args:", in: job), "no pod script in the Job")
        let policy = JobPolicy(yaml: job)
        #expect(policy.failIndexCodes.isSuperset(of: [4, 64]), "\(policy)")
        #expect(policy.failIndexCodes.isDisjoint(with: [0, 1, 2, 3, 5, 137]), "\(policy)")
        #expect(policy.backoffLimitPerIndex == 3, "\(policy)")
        // The image's user owns what the pod writes.
        let containerfile = try String(contentsOfFile: Tool.path("Containerfile"), encoding: .utf8)
        #expect(
            containerfile.contains("USER 10001") && job.contains("fsGroup: 10001") && job.contains("runAsUser: 10001"))

        let run = try AuditedCampaign(records: 3000, latency: "1..3ms")
        // One bad record: the shard that holds it ends with status 2 ("some records invalid").
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: run.campaign))
        handle.seekToEndOfFile()
        handle.write(Data("{\"token\":\"zz\",\"payload\":{\"aps\":{\"alert\":\"bad\"}}}\n".utf8))
        try handle.close()
        let resultsDir = run.directory.file("data/results")  // not there yet: the pod script makes it
        func pod(_ index: Int) -> [String: String] {
            [
                "CAMPAIGN": run.campaign, "RESULTS_DIR": resultsDir, "SHARDS": "2", "JOB_COMPLETION_INDEX": "\(index)",
                "APNS_KEY_FILE": MockProcess.keyFile, "APNS_KEY_ID": MockProcess.keyID,
                "APNS_TEAM_ID": MockProcess.teamID,
                "APNS_TOPIC": MockProcess.topic, "APNS_ENDPOINT": "https://127.0.0.1:\(run.mock.port)",
                "APNS_CA_FILE": run.mock.caFile,
            ]
        }
        let shard0 = resultsDir + "/spring-sale-0.ndjson"

        // Try 1: killed with -9 (the whole container) in the middle of the shard.
        let first = try ScriptProcess(script: script, environment: pod(0))
        first.waitWhileRunning(until: shard0, holds: 20_000)
        #expect(first.isRunning, "the pod finished before it could be killed")
        first.killGroup()
        // Tries 2 to 4: after the kill, after a success, after a success whose send said 2.
        var statuses: [Int32] = []
        for _ in 0..<3 {
            let retry = try ScriptProcess(script: script, environment: pod(0))
            statuses.append(retry.wait(timeout: 120 * Tool.timeScale))
            #expect(
                policy.decision(forExitStatus: statuses.last ?? -1) == .succeeded,
                "try \(statuses.count + 1): \(retry.stderr)" as Comment)
        }
        let other = try ScriptProcess(script: script, environment: pod(1))
        #expect(other.wait(timeout: 120 * Tool.timeScale) == 0, "\(other.stderr)")

        let lines = try Results.read(shard0) + Results.read(resultsDir + "/spring-sale-1.ndjson")
        var perLine: [Int: Int] = [:]
        for line in lines { perLine[line["line"] as? Int ?? 0, default: 0] += 1 }
        #expect(perLine.count == 3001, "\(perLine.count) of 3001 records have a line over both shards")
        #expect(perLine.values.allSatisfy { $0 == 1 }, "records with two final lines")
        try run.expectNothingAcceptedTwice()
        let mode = (try FileManager.default.attributesOfItem(atPath: resultsDir)[.posixPermissions] as? Int) ?? 0
        #expect(mode & 0o700 == 0o700, "the results folder is not usable by its owner")
    }

    @Test(
        "the nightly clean-up from the crontab, in cron's environment: twice a day and after a crash, nothing sent twice"
    )
    func cronNightlyCleanup() throws {
        let crontab = try String(contentsOfFile: Tool.path("samples/cron/crontab"), encoding: .utf8)
        let cron = try #require(CronTab(crontab), "no job line in the crontab")
        // Yesterday's campaign met a flaky APNs (half the requests answered 503, one attempt each); tonight's
        // replays go to a healthy one (with latency, so the replay can be killed in its middle).
        let run = try AuditedCampaign(records: 2000, mockFaults: ["--fault", "503=0.5", "--seed", "3"])
        let tonightLog = run.directory.file("accepted-tonight.ndjson")
        let tonight = try MockProcess(["--log-accepted", tonightLog, "--fault", "latency=2..6ms"])
        let resultsDir = run.directory.file("results")
        try FileManager.default.createDirectory(atPath: resultsDir, withIntermediateDirectories: true)
        let day = "2026-11-27"
        let campaignResults = resultsDir + "/\(day)-spring.ndjson"
        let sent = try Tool.run(
            ["send", run.campaign, "--results", campaignResults, "--max-attempts", "1"]
                + run.mock.clientArguments)
        #expect(sent.status == 3, "exit \(sent.status): \(sent.stderr)")
        let retryable = try Results.read(campaignResults).filter { $0["outcome"] as? String == "retryable" }.count
        #expect(retryable > 500, "\(retryable) retryable")

        // The env file as env.example says, pointed at this test's folders and mock.
        let envFile = run.directory.file("env")
        let binDir = (Tool.binary as NSString).deletingLastPathComponent
        let env = """
            APNS_KEY_FILE=\(MockProcess.keyFile)
            APNS_KEY_ID=\(MockProcess.keyID)
            APNS_TEAM_ID=\(MockProcess.teamID)
            APNS_TOPIC=\(MockProcess.topic)
            APNS_ENDPOINT=https://127.0.0.1:\(tonight.port)
            APNS_CA_FILE=\(tonight.caFile)
            RESULTS_DIR=\(resultsDir)
            OUT_DIR=\(run.directory.file("prune"))
            DAY=\(day)
            SQLITE_DB=\(run.directory.file("tokens.db"))
            PATH=\(binDir):/usr/bin:/bin

            """
        try Data(env.utf8).write(to: URL(fileURLWithPath: envFile))
        // The token database the script cleans (cleanup-sqlite.sql): a live row of another app, which stays.
        let seeded = try RunFilesEndToEndTests.shell(
            "sqlite3 -bail '\(run.directory.file("tokens.db"))' \"CREATE TABLE device_tokens "
                + "(token TEXT, topic TEXT, environment TEXT, registered_at_ms INTEGER, deleted_at_ms INTEGER); "
                + "INSERT INTO device_tokens VALUES ('aa00', 'com.example.other', 'production', 1, NULL)\"")
        #expect(seeded.status == 0, "\(seeded.stderr)")
        let log = run.directory.file("cleanup.log")
        let command = cron.command
            .replacingOccurrences(
                of: "/usr/local/lib/apns-bulk/nightly-cleanup.sh", with: Tool.path("samples/cron/nightly-cleanup.sh")
            )
            .replacingOccurrences(of: "/var/log/apns-bulk/cleanup.log", with: log)
        var environment = cron.variables
        environment["APNS_BULK_ENV"] = envFile
        let replayResults = resultsDir + "/replays/\(day).ndjson"

        // The first night's run, killed with -9 in the middle of its replay.
        let crashed = try ScriptProcess(script: command, environment: environment, cronEnvironment: true)
        crashed.waitWhileRunning(until: replayResults, holds: 8_000)
        #expect(crashed.isRunning, "the replay finished before it could be killed")
        crashed.killGroup()
        // Cron again, twice.
        for round in 1...2 {
            let again = try ScriptProcess(script: command, environment: environment, cronEnvironment: true)
            let status = again.wait(timeout: 120 * Tool.timeScale)
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            #expect(status == 0, "round \(round): exit \(status): \(text.suffix(2000))")
        }
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(text.contains("nothing sent"), "the second run did not find the replay finished: \(text.suffix(2000))")
        #expect(FileManager.default.fileExists(atPath: run.directory.file("prune/prune-\(day).csv")))
        #expect(text.contains("dead tokens removed from \(run.directory.file("tokens.db"))"), "\(text.suffix(2000))")
        let rows = try RunFilesEndToEndTests.shell(
            "test \"$(sqlite3 '\(run.directory.file("tokens.db"))' 'SELECT count(*) FROM device_tokens')\" = 1")
        #expect(rows.status == 0, "the other app's row was deleted")
        var perLine: [Int: Int] = [:]
        for line in try Results.read(replayResults) { perLine[line["line"] as? Int ?? 0, default: 0] += 1 }
        #expect(perLine.count == retryable, "\(perLine.count) replay lines for \(retryable) retryable records")
        #expect(perLine.values.allSatisfy { $0 == 1 }, "records with two final lines in the replay")
        var accepted = try run.accepted().perToken
        let tonightAccepted = try AuditedCampaign.accepted(inLog: tonightLog)
        let tonightCount = tonightAccepted.total
        accepted.merge(tonightAccepted.perToken, uniquingKeysWith: +)
        // Tonight's APNs is healthy: every replayed record is delivered, but for those in flight at the kill,
        // which are in doubt (the script leaves them out of the next replay, and running again never resends).
        let replayLines = try Results.read(replayResults)
        let delivered = replayLines.filter { $0["outcome"] as? String == "delivered" }.count
        let inDoubt = replayLines.filter { $0["outcome"] as? String == "in_doubt" }.count
        #expect(delivered + inDoubt == retryable, "\(delivered) delivered + \(inDoubt) in doubt of \(retryable)")
        #expect(tonightCount >= delivered && tonightCount <= delivered + inDoubt, "the mock accepted \(tonightCount)")
        let twice = accepted.filter { $0.value > 1 }
        #expect(twice.isEmpty, "accepted more than once over both nights: \(twice.prefix(5))")
        _ = try tonight.stop()
    }

    /// The text of the YAML block scalar (`- |`) that follows the line holding `key`, dedented.
    static func blockScalar(after key: String, in yaml: String) -> String? {
        let lines = yaml.components(separatedBy: "\n")
        guard let keyLine = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == key }),
            keyLine + 1 < lines.count, lines[keyLine + 1].trimmingCharacters(in: .whitespaces) == "- |"
        else { return nil }
        var body: [String] = []
        var indent: Int?
        for line in lines[(keyLine + 2)...] {
            let leading = line.prefix { $0 == " " }.count
            if !line.trimmingCharacters(in: .whitespaces).isEmpty {
                if indent == nil { indent = leading }
                if leading < (indent ?? 0) { break }
            }
            body.append(String(line.dropFirst(min(leading, indent ?? 0))))
        }
        return body.joined(separator: "\n")
    }
}

/// What a Job's `podFailurePolicy` and `backoffLimitPerIndex` say about a pod's exit status, read from the YAML
/// (the subset of the rules the sample uses: `FailIndex` on exit codes).
struct JobPolicy: CustomStringConvertible {
    enum Decision: Equatable { case succeeded, failIndex, retry }

    var failIndexCodes: Set<Int32> = []
    var backoffLimitPerIndex = 0

    init(yaml: String) {
        var action = ""
        for raw in yaml.components(separatedBy: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("backoffLimitPerIndex:") {
                backoffLimitPerIndex =
                    Int(line.dropFirst("backoffLimitPerIndex:".count).trimmingCharacters(in: .whitespaces)) ?? 0
            }
            if line.hasPrefix("- action:") {
                action = line.dropFirst("- action:".count).trimmingCharacters(in: .whitespaces)
            }
            if line.hasPrefix("values:"), action == "FailIndex" {
                let list = line.dropFirst("values:".count).trimmingCharacters(in: CharacterSet(charactersIn: " []"))
                failIndexCodes.formUnion(
                    list.split(separator: ",").compactMap { Int32($0.trimmingCharacters(in: .whitespaces)) })
            }
        }
    }

    func decision(forExitStatus status: Int32) -> Decision {
        if status == 0 { return .succeeded }
        return failIndexCodes.contains(status) ? .failIndex : .retry
    }

    var description: String { "FailIndex on \(failIndexCodes.sorted()), backoffLimitPerIndex \(backoffLimitPerIndex)" }
}

/// A crontab: its `VAR=value` lines and its one job's command.
struct CronTab {
    var variables: [String: String] = [:]
    var command: String

    init?(_ text: String) {
        var command: String?
        for raw in text.components(separatedBy: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            if fields.count == 1, let equals = line.firstIndex(of: "=") {
                variables[String(line[..<equals])] = String(line[line.index(after: equals)...])
            } else if fields.count == 6 {
                command = String(fields[5])
            }
        }
        guard let command else { return nil }
        self.command = command
    }
}

/// A `/bin/sh -c` script in a process group of its own (so a kill -9 reaches it and every process it started, as a
/// container's end does), its stderr kept.
final class ScriptProcess {
    private let process = Process()
    private let directory: TemporaryDirectory
    private let errorPath: String

    /// `cronEnvironment`: start from cron's bare environment (HOME, SHELL, PATH=/usr/bin:/bin) instead of ours.
    init(script: String, environment: [String: String], cronEnvironment: Bool = false) throws {
        directory = try TemporaryDirectory()
        errorPath = directory.file("stderr")
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        // Foundation starts the child as the leader of a process group of its own (POSIX_SPAWN_SETPGROUP): the
        // script and everything it starts can be killed together.
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        var env =
            cronEnvironment
            ? ["HOME": directory.path, "SHELL": "/bin/sh", "PATH": "/usr/bin:/bin", "LOGNAME": "root"]
            : ProcessInfo.processInfo.environment
        if !cronEnvironment {
            env["PATH"] = (Tool.binary as NSString).deletingLastPathComponent + ":" + (env["PATH"] ?? "/usr/bin:/bin")
        }
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    var isRunning: Bool { process.isRunning }
    var stderr: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }

    /// Waits while the script runs until the file at `path` holds `bytes` (at most a minute).
    func waitWhileRunning(until path: String, holds bytes: Int) {
        let deadline = Date().addingTimeInterval(60 * Tool.timeScale)
        while Date() < deadline, isRunning,
            ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) < bytes
        {
            usleep(2_000)
        }
    }

    /// SIGKILL to the script's whole process group, then waits.
    func killGroup() {
        precondition(
            getpgid(process.processIdentifier) == process.processIdentifier || !process.isRunning,
            "the script does not lead its own process group")
        kill(-process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        usleep(50_000)  // the group's other processes are gone too by now
    }

    /// Waits for the script's exit status (killed after `timeout` seconds: -1).
    func wait(timeout: Double) -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            killGroup()
            return -1
        }
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { killGroup() }
    }
}
