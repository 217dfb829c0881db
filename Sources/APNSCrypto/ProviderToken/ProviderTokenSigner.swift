/// Signs APNs provider tokens: compact ES256 JWS `base64url(header).base64url(claims).base64url(r||s)` with the
/// header exactly `{"alg":"ES256","kid":"<keyID>"}` and the claims exactly `{"iss":"<teamID>","iat":<seconds>}`.
/// Owns the key and the ids (validated once) and the encoded header, which never changes.
public struct ProviderTokenSigner: Sendable {
    /// The APNs signing key (.p8) that signs the tokens.
    public let key: ProviderKey
    /// The key's 10-character id, sent as the JWT's `kid`.
    public let keyID: String
    /// The developer team id, sent as the JWT's `iss`.
    public let teamID: String
    /// `base64url(header) + "."`, computed once.
    private let headerSegment: [UInt8]
    /// `{"iss":"<teamID>","iat":`, computed once; the claims are this, the digits of `iat`, and `}`.
    private let claimsPrefix: [UInt8]

    /// A signer for one key of one team. Throws `invalidKeyID` or `invalidTeamID` for ids that are not exactly
    /// 10 ASCII letters or digits (ids of that form need no JSON escaping).
    public init(key: ProviderKey, keyID: String, teamID: String) throws(CryptoError) {
        self.key = key
        self.keyID = try ProviderIdentifier.validateKeyID(keyID)
        self.teamID = try ProviderIdentifier.validateTeamID(teamID)
        var header: [UInt8] = []
        Base64URL.append(Array(#"{"alg":"ES256","kid":"\#(keyID)"}"#.utf8), to: &header)
        header.append(UInt8(ascii: "."))
        headerSegment = header
        claimsPrefix = Array(#"{"iss":"\#(teamID)","iat":"#.utf8)
    }

    /// A token issued at `issuedAt` (UNIX epoch seconds), as ASCII bytes.
    public func signBytes(issuedAt: Int64) throws(CryptoError) -> [UInt8] {
        var claims = claimsPrefix
        claims.append(contentsOf: String(issuedAt).utf8)
        claims.append(UInt8(ascii: "}"))
        var token = headerSegment
        token.reserveCapacity(headerSegment.count + Base64URL.encodedLength(of: claims.count) + 1 + 86)
        Base64URL.append(claims, to: &token)
        let signature = try key.key.signES256(token)
        token.append(UInt8(ascii: "."))
        Base64URL.append(signature, to: &token)
        return token
    }

    /// A token issued at `issuedAt` (UNIX epoch seconds).
    public func sign(issuedAt: Int64) throws(CryptoError) -> String {
        try String(decoding: signBytes(issuedAt: issuedAt), as: UTF8.self)
    }
}
