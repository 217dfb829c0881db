import APNSHTTP2

/// One pass over a request's header fields: where each field the validator reads is (an index into
/// `MockRequest.fields`) and whether any APNs header (`apns-*` or `authorization`) appears more than once.
struct RequestHeaderFields {
    var method: Int?
    var path: Int?
    var authorization: Int?
    var apnsID: Int?
    var pushType: Int?
    var priority: Int?
    var expiration: Int?
    var topic: Int?
    var collapseID: Int?
    var hasDuplicates = false

    init(scanning fields: HTTP2HeaderFieldList) {
        for index in 0..<fields.count {
            if fields.isPseudo(at: index) {
                // nghttp2 refuses a request with a pseudo-header field twice; the first one counts.
                switch fields.nameCount(at: index) {
                case 7 where method == nil && fields.name(at: index, is: ":method"): method = index
                case 5 where path == nil && fields.name(at: index, is: ":path"): path = index
                default: break
                }
                continue
            }
            switch fields.nameCount(at: index) {
            case 7 where fields.name(at: index, is: "apns-id"): Self.place(&apnsID, index, &hasDuplicates)
            case 10 where fields.name(at: index, is: "apns-topic"): Self.place(&topic, index, &hasDuplicates)
            case 13 where fields.name(at: index, is: "authorization"): Self.place(&authorization, index, &hasDuplicates)
            case 13 where fields.name(at: index, is: "apns-priority"): Self.place(&priority, index, &hasDuplicates)
            case 14 where fields.name(at: index, is: "apns-push-type"): Self.place(&pushType, index, &hasDuplicates)
            case 15 where fields.name(at: index, is: "apns-expiration"): Self.place(&expiration, index, &hasDuplicates)
            case 16 where fields.name(at: index, is: "apns-collapse-id"): Self.place(&collapseID, index, &hasDuplicates)
            default:
                // An `apns-` header this scanner has no slot for (for example one Apple adds later).
                if !hasDuplicates, fields.name(at: index, startsWith: "apns-"),
                    (0..<index).contains(where: { fields.name(at: $0) == fields.name(at: index) })
                {
                    hasDuplicates = true
                }
            }
        }
    }

    @inline(__always)
    private static func place(_ slot: inout Int?, _ index: Int, _ duplicates: inout Bool) {
        if slot != nil { duplicates = true } else { slot = index }
    }
}
