import APNSPipeline

/// The one line that says how to fix what stopped a campaign early: what was sent (key id, team id, topic,
/// endpoint), where to check it, and the exact command that continues the campaign. A stopped campaign is
/// continued by its own command run again with the cause fixed (`RunStart.continueStopped`): the command printed
/// is the one that ran, with the setting to fix replaced by the value to give (a placeholder where only the user
/// knows it, the other environment where the tokens belong to it).
struct StopHint {
    var keyID: String?
    var teamID: String?
    var topic: String?
    /// The endpoint as the run named it.
    var endpoint: String
    /// Whether the endpoint is Apple's production or development one (nil: another server).
    var environment: Environment?
    /// The command's arguments, without the program name.
    var arguments: [String]

    /// Apple's two environments.
    enum Environment: String {
        case production, development

        /// The other one.
        var other: Environment { self == .production ? .development : .production }
    }

    /// What the printed command holds in place of an endpoint only the user knows.
    static let endpointPlaceholder = "YOUR_ENDPOINT"

    /// The hint for a stop reason (its first word is the APNs reason, as `CampaignHealth` and `TokenRejectionCheck`
    /// write it). `failedStart`: nothing was kept, so the command starts the campaign rather than continuing it.
    func line(forStop why: String, failedStart: Bool = false) -> String? {
        let fix = fix(forStop: why, failedStart: failedStart)
        return fix.advice + ": " + fix.command
    }

    /// What to check for a stop reason, ending with the words that introduce the command (`advice`), and the
    /// command that continues the campaign (or, `failedStart`, runs it again) with the cause fixed.
    func fix(forStop why: String, failedStart: Bool = false) -> (advice: String, command: String) {
        let reason = why.prefix { $0 != " " && $0 != ":" }
        let key = "--key-id \(keyID ?? "?") and --team-id \(teamID ?? "?")"
        let goOn =
            failedStart
            ? "then run it again with" : "then continue the campaign (nothing APNs accepted is sent again) with"
        switch StoppedCampaign.Cause(reason: why) {
        case .credentials
        where reason == "BadCertificate" || reason == "BadCertificateEnvironment" || reason == "Forbidden":
            return (
                "APNs refused the client certificate for \(endpoint): check that it is an Apple Push certificate for "
                    + "this environment (development or production) and its app, \(goOn)", command()
            )
        case .credentials where reason == "UnrelatedKeyIdInToken" || reason == "BadEnvironmentKeyIdInToken":
            return (
                "the key named by \(key) is not this team's key for \(endpoint): check both ids and --endpoint, "
                    + "\(goOn) the right ones", command()
            )
        case .credentials:
            return (
                "APNs did not accept the provider token signed with \(key): check that the key id is the .p8 key's "
                    + "and the team id its team (App Store Connect, Users and Access, Integrations, Keys), \(goOn) the "
                    + "right ids", command()
            )
        case .environment:
            let named = environment.map { "the \($0.rawValue) environment" } ?? endpoint
            let fixed =
                environment.map { command(setting: "--endpoint", to: $0.other.rawValue) }
                ?? command(setting: "--endpoint", to: Self.endpointPlaceholder)
            return (
                "no token was accepted at \(named): APNs calls every token of the other environment BadDeviceToken, "
                    + "so none of them is listed for pruning; check which environment the app builds registered with "
                    + "(development: apps run from Xcode with a development profile; production: TestFlight, the App Store and "
                    + "ad hoc builds), \(goOn) that endpoint", fixed
            )
        case .topic where reason == "DeviceTokenNotForTopic":
            return (
                "the tokens are not for the topic \(topic ?? "(none)"): they belong to another app, so none of them "
                    + "is listed for pruning; \(goOn) the app's bundle id",
                command(setting: "--topic", to: CampaignReport.topicPlaceholder)
            )
        case .topic:
            return (
                "APNs refused the topic \(topic ?? "(none)"): it must be the bundle id of an app of team \(teamID ?? "?") "
                    + "(plus .voip, .complication, .pushkit.fileprovider for those push types); \(goOn) the right one",
                command(setting: "--topic", to: CampaignReport.topicPlaceholder)
            )
        case .pushType:
            return (
                "APNs refused the push type: \(goOn) the right one (alert, background, voip, …)",
                command(setting: "--push-type", to: CampaignReport.pushTypePlaceholder)
            )
        case .transport:
            return ("fix what stopped it (the endpoint, the network, the CA file or pins), \(goOn)", command())
        }
    }

    /// Where the value of `option` is in `words`: the word after `option`, or the `option=value` word (`inline`).
    static func valuePosition(of option: String, in words: [String]) -> (index: Int, inline: Bool)? {
        if let index = words.firstIndex(of: option), index + 1 < words.count { return (index + 1, false) }
        if let index = words.firstIndex(where: { $0.hasPrefix(option + "=") }) { return (index, true) }
        return nil
    }

    /// The command that ran, words quoted for a POSIX shell; with `option` set to `value` when given (replacing
    /// its value, or added at the end).
    func command(setting option: String? = nil, to value: String = "") -> String {
        var words = arguments
        if let option {
            switch Self.valuePosition(of: option, in: words) {
            case (let index, inline: false)?: words[index] = value
            case (let index, inline: true)?: words[index] = option + "=" + value
            case nil: words += [option, value]
            }
        }
        return (["apns-bulk"] + CampaignManifest.redacted(words)).map(ShellWord.quoted).joined(separator: " ")
    }
}
