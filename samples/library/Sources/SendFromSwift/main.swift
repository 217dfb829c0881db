import APNSBulk
import APNSCore
import APNSCrypto
import APNSPipeline
import APNSTransport
import Foundation

// Where to send and how to sign in: Apple's development endpoint by default; the mock with APNS_ENDPOINT and
// APNS_CA_FILE. The key is the repository's generated test key (samples/keys), never a real one.
let environment = ProcessInfo.processInfo.environment
let endpoint = try APNSEndpoint(parsing: environment["APNS_ENDPOINT"] ?? "development")
let key = try ProviderKey(contentsOfFile: "AuthKey_TEST123456.p8")
let signer = try ProviderTokenSigner(key: key, keyID: "TEST123456", teamID: "TEAMID1234")
var configuration = APNSClientConfiguration(
    endpoint: endpoint, authentication: .providerToken(signer, refreshIntervalSeconds: 40 * 60))
if let caFile = environment["APNS_CA_FILE"] {
    configuration.tls.trustRoots = .pemFile(path: caFile)
}

// One notification: PushSender connects on the first send and blocks until APNs answers.
let sender = try PushSender(configuration: configuration)
let notification = PushNotification(
    token: try DeviceToken(parsing: "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"),
    topic: try Topic(validating: "com.example.app"),
    pushType: .alert,
    payload: Array(#"{"aps":{"alert":"Your order has shipped"}}"#.utf8))
switch try sender.send(notification) {
case .answered(let answer):
    print("one notification: APNs answered \(answer.status)" + (answer.reason.map { " \($0)" } ?? ""))
case .failed(let failure):
    print("one notification: no answer (\(failure))")
}
sender.close()

// A campaign from a file, as `apns-bulk send` runs it: one result line per record, retries, resume, no duplicates.
let options = SendRunOptions(
    inputs: [CampaignInput(path: "campaign.ndjson")],
    reader: CampaignReaderOptions(defaults: CampaignDefaults(topic: try Topic(validating: "com.example.app"))),
    resultsPath: "results.ndjson", resultsFormat: .ndjson)
let outcome = try SendRun.run(options, engine: { try EventLoopSendEngine(configuration: configuration) })
print(outcome.summary.text(resultsPath: options.resultsPath))
