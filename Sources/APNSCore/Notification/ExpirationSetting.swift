/// What a record or campaign says about `apns-expiration`: an epoch (or `0`), a duration after the request is
/// first sent (`30m`, `24h`, `7d`, read by `DurationText`), or that duration resolved to the epoch it came to at
/// the first send. The header itself is always an epoch; only the dispatcher resolves a duration, once per record,
/// so every retry within the run sends the first value (docs/FILES.md, "Expiration").
///
/// Every case carries 8 bytes, so the setting is as small as the bare epoch it replaced (the dispatcher's
/// `PendingSend` must stay within 128 bytes).
public enum ExpirationSetting: Hashable, Sendable, CustomStringConvertible {
    /// Epoch seconds as written (`0`: deliver once, never store).
    case absolute(Expiration)
    /// That long after the request is first sent; not resolved yet.
    case relative(DurationText)
    /// A relative setting after its first send: the epoch it came to, and the duration it was written as.
    case resolved(epoch: UInt32, after: UInt32)

    /// Deliver once, do not store.
    public static let immediately = ExpirationSetting.absolute(.immediately)

    /// What a value may be, for messages that name the field or option.
    public static let acceptedForms = "epoch seconds, 0, or a duration like 30m, 24h, 7d"

    /// Reads epoch seconds (digits) or a duration (`1h30m`); the error names the accepted forms.
    public init(parsing text: some StringProtocol) throws(InputError) {
        if let duration = DurationText(parsing: text) {
            self = .relative(duration)
            return
        }
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            throw InputError(.expirationInvalid, "expiration '\(text)' is not \(Self.acceptedForms)")
        }
        guard let value = Int64(text), value <= Expiration.maximumEpochSeconds else {
            throw InputError(
                .expirationInvalid,
                "expiration \(text) is not epoch seconds between 0 and \(Expiration.maximumEpochSeconds)")
        }
        self = .absolute(try Expiration(epochSeconds: value))
    }

    /// The epoch the header carries; nil for a relative setting not resolved yet.
    public var epochSeconds: Int64? {
        switch self {
        case .absolute(let expiration): return expiration.epochSeconds
        case .relative: return nil
        case .resolved(let epoch, _): return Int64(epoch)
        }
    }

    /// The duration a relative setting was written as (resolved or not); nil for an absolute one.
    public var duration: DurationText? {
        switch self {
        case .absolute: return nil
        case .relative(let duration): return duration
        case .resolved(_, let after): return DurationText(seconds: Int64(after))
        }
    }

    /// Whether the setting still waits for its first send to become an epoch.
    public var needsResolving: Bool {
        if case .relative = self { return true }
        return false
    }

    /// The setting for a request first sent at `now` (epoch seconds): a relative one becomes `.resolved` at
    /// `now` plus its duration (at most `Expiration.maximumEpochSeconds`); the others stay as they are.
    public func resolved(atEpoch now: Int64) -> ExpirationSetting {
        guard case .relative(let duration) = self else { return self }
        let epoch = min(max(0, now) + duration.seconds, Expiration.maximumEpochSeconds)
        return .resolved(epoch: UInt32(epoch), after: UInt32(duration.seconds))
    }

    /// Epoch digits for an absolute or resolved setting, the duration (`1h30m`, in its shortest form) for a
    /// relative one: what a result line writes, and what `init(parsing:)` reads back.
    public var description: String {
        if let epochSeconds { return String(epochSeconds) }
        return duration?.description ?? ""
    }
}
