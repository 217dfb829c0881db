import APNSCore

/// A valid record's device token as `validate` needs it: either still in the record's own bytes, already in the
/// stored form (`DeviceToken.isStoredForm`: lowercase hex of an accepted length), so checking it made nothing; or
/// parsed into a `DeviceToken` (upper case, grouped, written with escapes).
enum CheckedToken {
    /// The token's stored-form hex digits, at this range of the record's bytes (`RawHeaderFields.bytes`).
    case inRecord(Range<Int>)
    case parsed(DeviceToken)
}
