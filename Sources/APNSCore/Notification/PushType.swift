/// The `apns-push-type` header values APNs accepts, with what each one requires of the topic and payload.
public enum PushType: String, Sendable, CaseIterable, Hashable {
    case alert
    case background
    case location
    case voip
    case complication
    case fileprovider
    case mdm
    case liveactivity
    case pushtotalk
    case widgets

    /// Parses a push type as written in a campaign file or on the command line (case-insensitive).
    public init(parsing text: some StringProtocol) throws(InputError) {
        guard let type = PushType(rawValue: text.lowercased()) else {
            let known = PushType.allCases.map(\.rawValue).joined(separator: ", ")
            throw InputError(.pushTypeUnknown, "unknown push type '\(text)' (known: \(known))")
        }
        self = type
    }

    /// The suffix APNs requires on the bundle id in `apns-topic` for this push type, if any.
    public var topicSuffix: String? {
        switch self {
        case .alert, .background, .mdm: return nil
        case .voip: return ".voip"
        case .complication: return ".complication"
        case .fileprovider: return ".pushkit.fileprovider"
        case .location: return ".location-query"
        case .liveactivity: return ".push-type.liveactivity"
        case .pushtotalk: return ".voip-ptt"
        case .widgets: return ".push-type.widgets"
        }
    }

    /// The largest payload APNs accepts for this push type, in bytes.
    public var maximumPayloadBytes: Int {
        self == .voip ? 5120 : 4096
    }
}
