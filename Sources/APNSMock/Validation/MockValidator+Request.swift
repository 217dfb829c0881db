import APNSCore

/// The request-shape checks that need no credentials: method, path and device token, duplicate headers, and the
/// syntax of `apns-id`, `apns-push-type`, `apns-priority`, `apns-expiration` and `apns-collapse-id` (each by the
/// same core type the client validates with, so the two agree on every value, README "Header values").
extension MockValidator {
    /// The headers of a request whose shape is valid, parsed.
    struct ShapedRequest {
        let token: DeviceToken
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
        let text = String(decoding: request.headers[index].value, as: UTF8.self)
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
        guard RequestHeaderFields.equals(request.method, "POST") else { return .failure(.init(.methodNotAllowed)) }
        let token: DeviceToken
        switch deviceToken(inPath: request.path) {
        case .success(let parsed): token = parsed
        case .failure(let rejection): return .failure(rejection)
        }
        guard !fields.hasDuplicates else { return .failure(.init(.duplicateHeaders)) }
        let headers = request.headers
        if case .failure = requestID { return .failure(.init(.badMessageID)) }
        var pushType: PushType?
        if let index = fields.pushType {
            pushType = PushType(rawValue: String(decoding: headers[index].value, as: UTF8.self))
            guard pushType != nil else { return .failure(.init(.invalidPushType)) }
        }
        var priority: Priority?
        if let index = fields.priority {
            priority = try? Priority(parsing: String(decoding: headers[index].value, as: UTF8.self))
            guard priority != nil else { return .failure(.init(.badPriority)) }
        }
        if let index = fields.expiration {
            guard (try? Expiration(parsing: String(decoding: headers[index].value, as: UTF8.self))) != nil else {
                return .failure(.init(.badExpirationDate))
            }
        }
        if let index = fields.collapseID {
            guard (try? CollapseID(validatingBytes: headers[index].value)) != nil else {
                return .failure(.init(.badCollapseID))
            }
        }
        return .success(ShapedRequest(token: token, fields: fields, pushType: pushType, priority: priority))
    }

    /// `/3/device/<hex>`: anything else is `BadPath`; an empty token is `MissingDeviceToken`; a token that is not
    /// plain hex (no spaces, brackets or query) or breaks `DeviceToken`'s length rules is `BadDeviceToken`.
    static func deviceToken(inPath path: [UInt8]) -> Result<DeviceToken, Rejection> {
        let prefixLength = pathPrefix.utf8CodeUnitCount
        let hasPrefix = path.count >= prefixLength && pathPrefix.withUTF8Buffer { prefix in
            (0..<prefixLength).allSatisfy { path[$0] == prefix[$0] }
        }
        guard hasPrefix else { return .failure(.init(.badPath)) }
        let hex = path[prefixLength...]
        guard !hex.isEmpty else { return .failure(.init(.missingDeviceToken)) }
        // The parse also takes the grouped `<0123abcd 4567ef01>` form some exports print, which a path never
        // carries: a token as long as its text had nothing but hex digits (one pass, no second scan).
        guard let token = try? DeviceToken(parsingBytes: hex), token.hex.utf8.count == hex.count else {
            return .failure(.init(.badDeviceToken))
        }
        return .success(token)
    }
}
