import APNSPipeline

/// The one line that says how to fix what stopped a campaign early, for the reasons a person must act on: which
/// key id, team id, topic or endpoint was sent, where to check it, and the command that finishes the campaign.
struct StopHint {
    var keyID: String?
    var teamID: String?
    var topic: String?
    var endpoint: String
    var resultsPath: String

    /// The hint for a stop reason (`CampaignHealth`'s "<Reason> on N requests in a row"), or nil for the others.
    func line(forStop why: String) -> String? {
        let reason = why.split(separator: " ").first.map(String.init) ?? ""
        let replay = "then finish the campaign with: apns-bulk replay \(ShellWord.quoted(resultsPath)) --results <new file>"
        let key = "--key-id \(keyID ?? "?") and --team-id \(teamID ?? "?")"
        switch reason {
        case "InvalidProviderToken", "MissingProviderToken":
            return "APNs did not accept the provider token signed with \(key): check that the key id is the .p8 key's "
                + "and the team id its team (App Store Connect, Users and Access, Integrations, Keys), \(replay) and the right ids"
        case "UnrelatedKeyIdInToken", "BadEnvironmentKeyIdInToken":
            return "the key named by \(key) is not this team's key for \(endpoint): check both ids and --endpoint, \(replay) "
                + "and the right ones"
        case "TopicDisallowed", "BadTopic", "MissingTopic":
            return "APNs refused the topic \(topic ?? "(none)"): it must be the bundle id of an app of team \(teamID ?? "?") "
                + "(plus .voip, .complication, .pushkit.fileprovider for those push types); finish the campaign with: "
                + "apns-bulk replay \(ShellWord.quoted(resultsPath)) --topic <bundle id> --results <new file>"
        case "InvalidPushType":
            return "APNs refused the push type: finish the campaign with: apns-bulk replay \(ShellWord.quoted(resultsPath)) "
                + "--push-type <alert|background|voip|…> --results <new file>"
        case "BadCertificate", "BadCertificateEnvironment", "Forbidden":
            return "APNs refused the client certificate for \(endpoint): check that it is an Apple Push certificate for "
                + "this environment (development or production) and its app, \(replay)"
        default:
            return nil
        }
    }
}
