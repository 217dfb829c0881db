import APNSCore
import APNSCrypto

/// Authentication, after the request-shape checks: a provider token in `authorization`, else the client
/// certificate of the TLS handshake, else 403 `MissingProviderToken`.
///
/// A client certificate without any topic is 403 `BadCertificate`; one not valid for the mock's environment
/// (development mode or production) is 403 `BadCertificateEnvironment`.
///
/// A token is checked in this order, each failure answering 403 unless noted:
/// 1. `bearer <JWT>`, the JWT as `ProviderTokenVerifier.parse` reads it (three base64url parts, `"alg":"ES256"`,
///    a `kid`, a string `iss` and an integer `iat`, a 64-byte `r||s` signature); nothing after `bearer` is
///    `MissingProviderToken`, any other malformed value `InvalidProviderToken`;
/// 2. the `kid` is a configured key, else `InvalidProviderToken`;
/// 3. the signature verifies with that key, else `InvalidProviderToken`;
/// 4. `iss` is the key's team, else `UnrelatedKeyIdInToken` (the key belongs to another team);
/// 5. `iat` is at most `allowedClockSkewSeconds` in the future, else `InvalidProviderToken`;
/// 6. `iat` is at most `tokenLifetimeSeconds` (one hour) old, else `ExpiredProviderToken`;
/// 7. `iss` is the team already bound to this connection, if any, else `InvalidProviderToken` (one team per
///    connection);
/// 8. a token that replaces the connection's current one must be issued at least `tokenUpdateIntervalSeconds`
///    (20 minutes) after it, else 429 `TooManyProviderTokenUpdates` (measured between the tokens' `iat`s, so a
///    client that shares one token across connections and re-signs it at 50 minutes is never punished; right after
///    an injected `ExpiredProviderToken` the next change is allowed at once, on every connection whose current
///    token that answer declared expired).
///
/// The connection keeps its current token (and the one before it, still honoured for requests rendered before
/// the change) by its exact header bytes and its JWT: a repeat skips parsing and signature verification and only
/// re-checks the age (rule 6).
extension MockValidator {
    /// Who the request speaks for.
    enum Authority {
        case token(teamID: String)
        case certificate(topics: [String])
    }

    mutating func authenticate(
        _ request: MockRequest,
        _ fields: RequestHeaderFields,
        now: Int64,
        connection: inout MockConnectionState,
        actions: inout [MockConnectionAction]
    ) -> Result<Authority, Rejection> {
        guard let index = fields.authorization else {
            guard let certificate = connection.clientCertificate else { return .failure(.init(.missingProviderToken)) }
            guard !certificate.topics.isEmpty else { return .failure(.init(.badCertificate)) }
            let environmentFits = configuration.developmentMode ? certificate.allowsDevelopment : certificate.allowsProduction
            guard environmentFits else { return .failure(.init(.badCertificateEnvironment)) }
            markAuthenticated(&connection, &actions)
            return .success(.certificate(topics: certificate.topics))
        }
        if let known = connection.currentToken, request.fields.value(at: index, equals: known.authorization) {
            return checkAge(issuedAt: known.issuedAt, now: now).map { .token(teamID: known.teamID) }
        }
        if let known = connection.previousToken, request.fields.value(at: index, equals: known.authorization) {
            return checkAge(issuedAt: known.issuedAt, now: now).map { .token(teamID: known.teamID) }
        }
        let value = Array(request.fields.value(at: index))

        let jwt: [UInt8]
        do throws(BearerToken.Failure) {
            jwt = try BearerToken.jwt(in: value)
        } catch {
            return .failure(.init(error == .missing ? .missingProviderToken : .invalidProviderToken))
        }
        // The same token written differently ("Bearer  <jwt>") is still the same token, not a change.
        for known in [connection.currentToken, connection.previousToken].compactMap({ $0 }) where known.jwt == jwt {
            return checkAge(issuedAt: known.issuedAt, now: now).map { .token(teamID: known.teamID) }
        }
        guard let parts = try? ProviderTokenVerifier.parse(jwt) else { return .failure(.init(.invalidProviderToken)) }
        guard let key = keysByID[parts.keyID] else { return .failure(.init(.invalidProviderToken)) }
        counters.recordSignatureVerification()
        guard key.publicKey.isValidSignature(parts.signature, for: parts.signingInput) else {
            return .failure(.init(.invalidProviderToken))
        }
        guard parts.teamID == key.teamID else { return .failure(.init(.unrelatedKeyIDInToken)) }
        guard parts.issuedAt <= now + configuration.allowedClockSkewSeconds else {
            return .failure(.init(.invalidProviderToken))
        }
        if case .failure(let rejection) = checkAge(issuedAt: parts.issuedAt, now: now) { return .failure(rejection) }
        if let team = connection.boundTeamID, team != parts.teamID { return .failure(.init(.invalidProviderToken)) }

        if let current = connection.currentToken {
            let interval = parts.issuedAt - current.issuedAt
            let declaredExpired = connection.tokenRefreshPermitted || tokensDeclaredExpired.contains(current.jwt)
            guard declaredExpired || interval >= configuration.tokenUpdateIntervalSeconds else {
                return .failure(.init(.tooManyProviderTokenUpdates))
            }
            connection.previousToken = current
            connection.tokenChangeCount += 1
            connection.tokenRefreshPermitted = false
        }
        connection.currentToken = MockConnectionState.VerifiedToken(
            authorization: value, jwt: jwt, keyID: parts.keyID, teamID: parts.teamID, issuedAt: parts.issuedAt
        )
        connection.boundTeamID = parts.teamID
        markAuthenticated(&connection, &actions)
        return .success(.token(teamID: parts.teamID))
    }

    private func checkAge(issuedAt: Int64, now: Int64) -> Result<Void, Rejection> {
        now - issuedAt > configuration.tokenLifetimeSeconds ? .failure(.init(.expiredProviderToken)) : .success(())
    }

    /// The first authenticated request raises the stream limit from the initial value to the maximum.
    private func markAuthenticated(_ connection: inout MockConnectionState, _ actions: inout [MockConnectionAction]) {
        guard !connection.isAuthenticated else { return }
        connection.isAuthenticated = true
        let maximum = configuration.maxConcurrentStreams
        if connection.streamLimit < maximum {
            connection.streamLimit = maximum
            actions.append(.raiseStreamLimit(maximum))
        }
    }
}
