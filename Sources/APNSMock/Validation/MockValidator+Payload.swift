import APNSCore

/// The payload checks, after the topic (which fixes the push type and so the size limit), by `PayloadRules`:
/// empty → 400 `PayloadEmpty`; over 4096 bytes (5120 for voip) → 413 `PayloadTooLarge`; priority 10 (or no
/// priority) with an `aps` holding only `content-available` → 400 `BadPriority` (Apple calls that combination an
/// error; `BadPriority` is the reason that names it). A body that is not a JSON object answers 400 `PayloadEmpty`:
/// APNs documents no reason for it, and `PayloadEmpty` is the nearest documented input-error reason.
extension MockValidator {
    static func checkPayload(_ body: [UInt8], pushType: PushType, priority: Priority?) -> Rejection? {
        do throws(InputError) {
            try PayloadRules.validate(JSONScanner(body), range: 0..<body.count, pushType: pushType, priority: priority)
            return nil
        } catch {
            switch error.code {
            case .payloadTooLarge: return Rejection(.payloadTooLarge)
            case .priorityForbiddenForBackground: return Rejection(.badPriority)
            default: return Rejection(.payloadEmpty)
            }
        }
    }
}
