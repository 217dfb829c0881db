import APNSCore
import APNSPipeline
import ArgumentParser
import Foundation

/// `--pushgateway` and what a gateway behind TLS and basic authentication needs (docs/RUNNING.md "Pushing to a
/// Pushgateway"): the URL, the user, where the password comes from, the CA file, and the interval of pushes
/// during a run. Read once into a `PushgatewayPush` (`target()`).
struct PushgatewayOptions: ParsableArguments {
    @Option(
        name: .customLong("pushgateway"),
        help: ArgumentHelp(
            "Also push the metrics to this Prometheus Pushgateway when the run ends (http://host:port or "
                + "https://host:port; default: $APNS_PUSHGATEWAY), grouped by job apns-bulk, campaign and shard. A failed "
                + "push is a warning.",
            valueName: "url"))
    var url: String?

    @Option(
        name: .customLong("pushgateway-user"),
        help: ArgumentHelp(
            "The gateway's basic-authentication user (default: $APNS_PUSHGATEWAY_USER); the password comes from "
                + "$APNS_PUSHGATEWAY_PASSWORD or --pushgateway-password-file.",
            valueName: "name"))
    var user: String?

    @Option(
        name: .customLong("pushgateway-password-file"),
        help: ArgumentHelp(
            "A file holding the basic-authentication password (its first line), e.g. a mounted Kubernetes secret.",
            valueName: "file"), completion: ValueCompletion.anyFile)
    var passwordFile: String?

    @Option(
        name: .customLong("pushgateway-ca-file"),
        help: ArgumentHelp(
            "The CA certificates (PEM) an https:// gateway's certificate must chain to (default: the system store).",
            valueName: "file"), completion: ValueCompletion.anyFile)
    var caFile: String?

    @Option(
        name: .customLong("pushgateway-interval"),
        help: ArgumentHelp(
            "Also push while the run goes on, at most this often (30s, 1m, 5m; default: $APNS_PUSHGATEWAY_INTERVAL, else "
                + "only at the end). Pushes during the run set apns_bulk_run_in_progress 1 and never the last-success time.",
            valueName: "duration"))
    var interval: String?

    mutating func validate() throws {
        _ = try target()
    }

    /// The gateway to push to, from the options and the environment (an empty variable is none); nil when none is
    /// named. Every refusal names the option (or variable) and the fix.
    func target(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> PushgatewayPush? {
        func variable(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        guard let given = url ?? variable("APNS_PUSHGATEWAY") else {
            for (option, value) in [
                ("--pushgateway-user", user), ("--pushgateway-password-file", passwordFile),
                ("--pushgateway-ca-file", caFile), ("--pushgateway-interval", interval),
            ] where value != nil {
                throw ValidationError("\(option) needs a gateway: give --pushgateway URL (or APNS_PUSHGATEWAY).")
            }
            return nil
        }
        var target: PushgatewayPush
        do throws(PushgatewayPush.URLError) {
            target = try PushgatewayPush(url: given)
        } catch {
            // From the environment: the variable named where the option would be.
            let fromVariable = error.description.replacingOccurrences(of: "--pushgateway ", with: "APNS_PUSHGATEWAY ")
                .replacingOccurrences(of: "--pushgateway:", with: "APNS_PUSHGATEWAY:")
            throw ValidationError(url == nil ? fromVariable : error.description)
        }
        if let caFile {
            guard target.usesTLS else {
                throw ValidationError(
                    "--pushgateway-ca-file is for an https:// gateway; \(target.displayURL) is plain http.")
            }
            guard FileManager.default.isReadableFile(atPath: caFile) else {
                throw ValidationError("--pushgateway-ca-file: cannot read \(caFile).")
            }
            target.trustedCAFile = caFile
        }
        target.credentials = try credentials(environment: environment, variable: variable)
        _ = try pushInterval(environment: environment)
        return target
    }

    /// `user:password`, or nil without a user; a user without a password (or the reverse) is refused.
    private func credentials(environment: [String: String], variable: (String) -> String?) throws -> String? {
        let name = user ?? variable("APNS_PUSHGATEWAY_USER")
        var password = variable("APNS_PUSHGATEWAY_PASSWORD")
        if let passwordFile {
            guard let text = try? String(contentsOfFile: passwordFile, encoding: .utf8) else {
                throw ValidationError("--pushgateway-password-file: cannot read \(passwordFile).")
            }
            password =
                text.split(separator: "\n", omittingEmptySubsequences: false).first.map {
                    String($0.hasSuffix("\r") ? $0.dropLast() : $0)
                } ?? ""
            guard password?.isEmpty == false else {
                throw ValidationError(
                    "--pushgateway-password-file: \(passwordFile) is empty; its first line is the password.")
            }
        }
        switch (name, password) {
        case (nil, nil): return nil
        case (let name?, let password?):
            guard !name.contains(":") else {
                throw ValidationError("--pushgateway-user cannot hold a colon (basic authentication).")
            }
            return name + ":" + password
        case (nil, _?):
            throw ValidationError(
                "a Pushgateway password is given but no user: give --pushgateway-user (or APNS_PUSHGATEWAY_USER).")
        case (_?, nil):
            throw ValidationError(
                "--pushgateway-user needs its password: set APNS_PUSHGATEWAY_PASSWORD or give "
                    + "--pushgateway-password-file.")
        }
    }

    /// `--pushgateway-interval` (else `$APNS_PUSHGATEWAY_INTERVAL`) in seconds (at least 1 s), nil when neither.
    func pushInterval(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Double? {
        guard let text = interval ?? environment["APNS_PUSHGATEWAY_INTERVAL"].flatMap({ $0.isEmpty ? nil : $0 }) else {
            return nil
        }
        guard let duration = DurationText(parsing: text), duration.seconds >= 1 else {
            let source = interval == nil ? "APNS_PUSHGATEWAY_INTERVAL" : "--pushgateway-interval"
            throw ValidationError("\(source) \(text): give a duration of at least a second (30s, 1m, 5m).")
        }
        return Double(duration.seconds)
    }
}
