import APNSCore

/// Reopens the result file of a campaign that stopped early, so that running the same command again (the cause
/// fixed) continues it: the lines of records APNs never accepted are taken out — `not_sent`, `retryable` (the
/// rejections of wrong credentials and the tokens held back for an unconfirmed topic among them), and the
/// `input_error`s APNs gave for a campaign-wide setting (`BadTopic`, `TopicDisallowed`, `MissingTopic`,
/// `InvalidPushType`) — and the run then goes on as an unfinished one does: records without a line are sent.
/// Delivered, dead-token, invalid, duplicate and `in_doubt` lines stay: nothing that may have reached a device is
/// sent again.
///
/// The file is rewritten whole (a new file beside it, forced to the disk, renamed over it) before the campaign
/// record says `unfinished`: a crash in between leaves the record `stopped`, and the next run takes out nothing
/// more.
public enum StoppedCampaign {
    /// The APNs reasons of `input_error` lines that a campaign-wide setting caused, sent again on continuing.
    public static let settingReasons: Set<String> = APNSReason.campaignSettingReasons

    /// Whether a stopped campaign's continuation sends the record of this line again.
    public static func isSentAgain(_ record: ResultRecord) -> Bool {
        switch record.outcome {
        case .notSent, .retryable: return true
        case .inputError: return record.status != nil && record.reason.map(settingReasons.contains) == true
        case .delivered, .prune, .duplicate, .inDoubt, .expired: return false
        }
    }

    /// Rewrites the result file at `resultsPath` (of `format`, its lines naming `inputs`) without the lines whose
    /// records are sent again; returns how many were taken out. A CSV file keeps its `keptNames` columns.
    public static func reopen(
        resultsPath: String, inputs: [String], format: ResultFormat, keptNames: [String] = []
    ) throws(PipelineError) -> Int {
        let reader = try ResultReader(path: resultsPath, inputFiles: InputFileList(inputs))
        let temporary = "\(resultsPath).continue-tmp"
        POSIXFile.remove(temporary)
        var removed = 0
        do throws(PipelineError) {
            let writer = try ResultWriter(
                path: temporary, format: reader.format ?? format, mode: .create, inputFiles: InputFileList(inputs),
                keptNames: keptNames)
            while let record = try reader.next() {
                guard record.key.fileIndex < inputs.count else {
                    throw PipelineError(
                        .campaignChanged,
                        "\(resultsPath):\(reader.lineNumber): a line of the input "
                            + "\(reader.inputFiles.path(at: record.key.fileIndex)), which this run is not given")
                }
                if isSentAgain(record) {
                    removed += 1
                } else {
                    try writer.write(record)
                }
            }
            try writer.flush()
            try writer.synchronize()
            try POSIXFile.rename(temporary, over: resultsPath)
        } catch {
            POSIXFile.remove(temporary)
            throw error
        }
        return removed
    }
}

// MARK: - Cause

extension StoppedCampaign {
    /// What kind of campaign-wide cause stopped a campaign, read from the stop's reason (its first word is the APNs
    /// reason, as `CampaignHealth` and `TokenRejectionCheck` write it), and so which settings a person may change to
    /// continue it: the topic for a topic stop, the push type for a push-type stop. Credentials, the endpoint, the CA,
    /// pins and the proxy are never part of a campaign's identity, so fixing those needs no allowance.
    public enum Cause: String, Sendable, Equatable, CaseIterable {
        /// The provider token or certificate was refused.
        case credentials
        /// Every token of a topic was called bad, none accepted: the endpoint's environment does not match the tokens.
        case environment
        /// The topic was refused, or every token was another app's.
        case topic
        /// The push type was refused.
        case pushType = "push type"
        /// The transport could not work (TLS, HTTP/2, connections failing), or another cause.
        case transport

        /// The cause of a stop reason.
        public init(reason: String) {
            let word = reason.prefix { $0 != " " && $0 != ":" }
            switch APNSReason(rawValue: String(word)) {
            case .invalidProviderToken, .missingProviderToken, .badCertificate, .badCertificateEnvironment, .forbidden,
                .unrelatedKeyIDInToken, .badEnvironmentKeyIDInToken, .expiredProviderToken:
                self = .credentials
            case .badDeviceToken:
                self = .environment
            case .badTopic, .topicDisallowed, .missingTopic, .deviceTokenNotForTopic:
                self = .topic
            case .invalidPushType:
                self = .pushType
            default:
                self = .transport
            }
        }

        /// The campaign settings (`CampaignIdentity.settings` names) that may change when this stop is continued.
        public var settingsItFixes: Set<String> {
            switch self {
            case .topic: return ["--topic"]
            case .pushType: return ["--push-type"]
            case .credentials, .environment, .transport: return []
            }
        }
    }
}
