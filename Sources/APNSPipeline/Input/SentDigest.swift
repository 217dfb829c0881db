import APNSCore

/// A 64-bit digest of what a notification sends: its token, topic, push type, priority, expiration, collapse id,
/// apns-id and payload bytes (`ContentFingerprint.digest64` over each, chained). A run reading a stream journals
/// it with each send (`SendJournal`), so that a run continuing it can check that the records it reads again are
/// the ones sent (`ContinuedStream`). About 60 ns a notification of 150 payload bytes, nothing allocated
/// (docs/PERFORMANCE.md).
public enum SentDigest {
    /// A 64-bit digest of everything the notification sends.
    public static func of(_ notification: PushNotification) -> UInt64 {
        var state = ContentFingerprint.digest64(notification.payload.span)
        state = ContentFingerprint.digest64(notification.token.hex.utf8.span, seed: state)
        state = ContentFingerprint.digest64(notification.topic.value.utf8.span, seed: state)
        state = StableHash.fnv1a(notification.pushType.rawValue.utf8, state: state)
        if let collapseID = notification.collapseID {
            state = ContentFingerprint.digest64(collapseID.value.utf8.span, seed: state ^ 1)
        }
        if let apnsID = notification.apnsID { state = ContentFingerprint.digest64(apnsID.bytes.span, seed: state ^ 2) }
        let priority = UInt64(truncatingIfNeeded: notification.priority?.rawValue ?? 0)
        let expiration = notification.expiration.map(Self.expirationBits) ?? 0
        return StableHash.mix(state ^ StableHash.mix(priority << 56 ^ expiration))
    }

    /// An epoch as itself plus 1; a duration, resolved or not, as its seconds above every epoch (bit 40), so the
    /// digest journaled at the first send matches the record read again before it is sent.
    private static func expirationBits(_ setting: ExpirationSetting) -> UInt64 {
        if let duration = setting.duration { return UInt64(truncatingIfNeeded: duration.seconds) | 1 << 40 }
        return UInt64(truncatingIfNeeded: setting.epochSeconds ?? 0) &+ 1
    }
}
