import APNSCore
import APNSHTTP2

/// The request-shape checks that need no credentials: method, path and device token, duplicate headers, and the
/// syntax of `apns-id`, `apns-push-type`, `apns-priority`, `apns-expiration` and `apns-collapse-id` (each by the
/// same core type the client validates with, so the two agree on every value; docs/FILES.md, "Header values").
extension MockValidator {
    /// The headers of a request whose shape is valid, parsed.
    struct ShapedRequest {
        /// The device token in its stored form (lowercase hex), as the path carried it or lowered from it.
        let token: ArraySlice<UInt8>
        let fields: RequestHeaderFields
        /// nil when the header is absent (inferred from the topic later).
        let pushType: PushType?
        /// nil when the header is absent (APNs's default, 10).
        let priority: Priority?
    }

    static let pathPrefix: StaticString = "/3/device/"

    /// The request's `apns-id`: nil when absent, `.success` when valid (echoed in every answer, errors included),
    /// `.failure` when present but not a UUID.
    static func requestID(_ request: MockRequest, _ fields: RequestHeaderFields) -> Result<APNSID, InputError>? {
        guard let index = fields.apnsID else { return nil }
        let text = String(decoding: request.fields.value(at: index), as: UTF8.self)
        do throws(InputError) {
            return .success(try APNSID(parsing: text))
        } catch {
            return .failure(error)
        }
    }

    /// Checks method, path, duplicates and header syntax, in that order. `requestID` is `requestID(_:_:)`.
    static func checkShape(
        _ request: MockRequest,
        _ fields: RequestHeaderFields,
        requestID: Result<APNSID, InputError>?
    ) -> Result<ShapedRequest, Rejection> {
        let list = request.fields
        guard let method = fields.method, list.value(at: method, is: "POST") else {
            return .failure(.init(.methodNotAllowed))
        }
        let token: ArraySlice<UInt8>
        guard let path = fields.path, list.value(at: path, startsWith: pathPrefix) else {
            return .failure(.init(.badPath))
        }
        switch deviceToken(list.value(at: path).dropFirst(pathPrefix.utf8CodeUnitCount)) {
        case .success(let parsed): token = parsed
        case .failure(let rejection): return .failure(rejection)
        }
        guard !fields.hasDuplicates else { return .failure(.init(.duplicateHeaders)) }
        if case .failure = requestID { return .failure(.init(.badMessageID)) }
        var pushType: PushType?
        if let index = fields.pushType {
            pushType = PushType(rawValue: String(decoding: list.value(at: index), as: UTF8.self))
            guard pushType != nil else { return .failure(.init(.invalidPushType)) }
        }
        var priority: Priority?
        if let index = fields.priority {
            priority = try? Priority(parsing: String(decoding: list.value(at: index), as: UTF8.self))
            guard priority != nil else { return .failure(.init(.badPriority)) }
        }
        if let index = fields.expiration {
            guard (try? Expiration(parsing: String(decoding: list.value(at: index), as: UTF8.self))) != nil else {
                return .failure(.init(.badExpirationDate))
            }
        }
        if let index = fields.collapseID {
            guard (try? CollapseID(validatingBytes: Array(list.value(at: index)))) != nil else {
                return .failure(.init(.badCollapseID))
            }
        }
        return .success(ShapedRequest(token: token, fields: fields, pushType: pushType, priority: priority))
    }

    /// The token after `/3/device/` (anything else is `BadPath`): empty is `MissingDeviceToken`; a token that is not
    /// plain hex (no spaces, brackets or query) or breaks `DeviceToken`'s length rules is `BadDeviceToken`.
    /// A token already in its stored form is passed on as it is (the usual case: nothing is made).
    static func deviceToken(_ hex: ArraySlice<UInt8>) -> Result<ArraySlice<UInt8>, Rejection> {
        guard !hex.isEmpty else { return .failure(.init(.missingDeviceToken)) }
        if DeviceToken.isStoredForm(hex) { return .success(hex) }
        // The parse also takes the grouped `<0123abcd 4567ef01>` form some exports print, which a path never
        // carries: a token as long as its text had nothing but hex digits (one pass, no second scan).
        guard let token = try? DeviceToken(parsingBytes: hex), token.hex.utf8.count == hex.count else {
            return .failure(.init(.badDeviceToken))
        }
        return .success(Array(token.hex.utf8)[...])
    }
}
