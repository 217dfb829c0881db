import APNSPipeline
import Foundation

extension StopHint {
    /// The hint for a campaign record: the key id, team id, topic and endpoint its run was given, read off its
    /// arguments (or the `APNS_…` variables the options fall back to), and where it sent.
    init(manifest: CampaignManifest, environmentVariables: [String: String] = ProcessInfo.processInfo.environment) {
        let arguments = manifest.arguments
        func value(_ option: String, _ variable: String?) -> String? {
            switch StopHint.valuePosition(of: option, in: arguments) {
            case (let index, inline: false)?: return arguments[index]
            case (let index, inline: true)?: return String(arguments[index].dropFirst(option.count + 1))
            case nil: return variable.flatMap { environmentVariables[$0] }
            }
        }
        let environment = manifest.environment.flatMap(Environment.init(rawValue:))
        self.init(
            keyID: value("--key-id", "APNS_KEY_ID"), teamID: value("--team-id", "APNS_TEAM_ID"),
            topic: value("--topic", "APNS_TOPIC"),
            endpoint: value("--endpoint", "APNS_ENDPOINT") ?? manifest.environment ?? Environment.production.rawValue,
            environment: environment, arguments: arguments)
    }

    /// The result files among `paths` whose campaign stopped early and can be continued, each with the command
    /// that continues it (`report` proposes those in place of a replay).
    static func stoppedRuns(resultPaths paths: [String]) -> [StoppedRun] {
        paths.compactMap { path in
            guard let manifest = try? CampaignManifest.read(forResults: path), manifest.isStopped,
                let why = manifest.stoppedEarly
            else { return nil }
            let fix = StopHint(manifest: manifest).fix(forStop: why)
            return StoppedRun(resultsPath: path, why: why, advice: fix.advice, command: fix.command)
        }
    }
}
