import APNSCore

/// What a parser's `check` found in one record, for `CampaignReader.checkRecords`: a valid record's token and
/// topic, or what the parser's `parse` puts in the invalid record (`CampaignRecord.Content.invalid`).
enum CheckedLine {
    case valid(CheckedToken, Topic)
    case invalid(InputError, tokenText: String?, topicText: String?)
}
