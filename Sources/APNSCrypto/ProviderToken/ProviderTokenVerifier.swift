import Foundation

/// A provider token taken apart: the key id (`kid`) from the JOSE header, the team id (`iss`) and issue time
/// (`iat`, UNIX epoch seconds) from the claims, the signing input and the raw signature.
public struct ParsedProviderToken: Sendable, Hashable {
    /// The JWT's `kid`: the signing key's id.
    public let keyID: String
    /// The JWT's `iss`: the team id.
    public let teamID: String
    /// The JWT's `iat`, in seconds since the epoch.
    public let issuedAt: Int64
    /// Whether `iat` came as a JSON string of decimal digits (`"1700000000"`) rather than a number: APNSwift
    /// signed it so from 2022 to mid-2026, and APNs accepted those tokens.
    public let issuedAtIsString: Bool
    /// `base64url(header).base64url(claims)`: the bytes the signature covers.
    public let signingInput: [UInt8]
    /// The raw 64-byte `r||s` signature.
    public let signature: [UInt8]
}

/// The outcome of checking a provider token against a public key: what it says, and whether the key signed it.
public struct ProviderTokenVerification: Sendable, Hashable {
    /// The token as parsed.
    public let token: ParsedProviderToken
    /// Whether the signature verifies with the key given.
    public let signatureIsValid: Bool
}

/// Reads and checks APNs provider tokens (compact ES256 JWS), as APNs does and as the mock server does.
///
/// Parsing requires three base64url segments, a JSON header with `"alg":"ES256"` and a string `kid`, JSON claims
/// with a string `iss` and an integer `iat` (a number, or a string of 1 to 18 decimal digits, as APNs accepts; see
/// `ParsedProviderToken.issuedAtIsString`), and a 64-byte signature. Other members are ignored. Not a hot path:
/// the mock verifies a token once per connection and recognises it by its bytes afterwards.
public enum ProviderTokenVerifier {
    /// Takes a token apart without checking its signature.
    public static func parse(_ token: String) throws(CryptoError) -> ParsedProviderToken {
        try parse(Array(token.utf8))
    }

    /// Takes a token (ASCII bytes) apart without checking its signature.
    public static func parse(_ token: [UInt8]) throws(CryptoError) -> ParsedProviderToken {
        let dot = UInt8(ascii: ".")
        let segments = token.split(separator: dot, maxSplits: 3, omittingEmptySubsequences: false)
        guard segments.count == 3 else {
            throw CryptoError.malformedToken.with(context: "\(segments.count) dot-separated parts, expected 3")
        }
        guard let headerJSON = Base64URL.decode(segments[0]) else { throw malformed("header is not base64url") }
        guard let claimsJSON = Base64URL.decode(segments[1]) else { throw malformed("claims are not base64url") }
        guard let signature = Base64URL.decode(segments[2]) else { throw malformed("signature is not base64url") }

        guard let header = try? JSONDecoder().decode(Header.self, from: Data(headerJSON)) else {
            throw malformed("header is not a JSON object with string members")
        }
        guard header.alg == "ES256" else {
            throw CryptoError.unsupportedTokenAlgorithm.with(
                context: header.alg.map { "\"\($0)\", expected ES256" } ?? "no alg")
        }
        guard let keyID = header.kid else { throw malformed("header has no kid") }
        guard let claims = try? JSONDecoder().decode(Claims.self, from: Data(claimsJSON)) else {
            throw malformed("claims are not a JSON object with a string iss and an integer iat")
        }
        guard signature.count == 2 * OpenSSLKey.es256HalfLength else {
            throw malformed("signature is \(signature.count) bytes, expected the 64-byte r||s (not DER)")
        }
        let signingInputEnd = segments[1].endIndex
        return ParsedProviderToken(
            keyID: keyID,
            teamID: claims.iss,
            issuedAt: claims.iat,
            issuedAtIsString: claims.iatIsString,
            signingInput: Array(token[..<signingInputEnd]),
            signature: signature
        )
    }

    /// Takes a token apart and checks its signature with `key`. Throws only for tokens that cannot be parsed; a
    /// well-formed token with a bad signature returns `signatureIsValid == false`.
    public static func verify(_ token: String, with key: ProviderPublicKey) throws(CryptoError)
        -> ProviderTokenVerification
    {
        let parsed = try parse(token)
        return ProviderTokenVerification(
            token: parsed,
            signatureIsValid: key.isValidSignature(parsed.signature, for: parsed.signingInput)
        )
    }

    private static func malformed(_ reason: String) -> CryptoError {
        CryptoError.malformedToken.with(context: reason)
    }

    /// The JOSE header members APNs reads.
    private struct Header: Decodable {
        let alg: String?
        let kid: String?
    }

    /// The claims APNs reads: `iat` as a JSON integer or as a string of decimal digits.
    private struct Claims: Decodable {
        let iss: String
        let iat: Int64
        let iatIsString: Bool

        private enum CodingKeys: String, CodingKey {
            case iss
            case iat
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            iss = try container.decode(String.self, forKey: .iss)
            if let number = try? container.decode(Int64.self, forKey: .iat) {
                iat = number
                iatIsString = false
                return
            }
            let text = try container.decode(String.self, forKey: .iat)
            // Digits only (no sign, space or exponent); 18 digits cannot overflow Int64.
            guard (1...18).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                let number = Int64(text)
            else {
                throw DecodingError.dataCorruptedError(
                    forKey: .iat, in: container, debugDescription: "iat is not decimal digits")
            }
            iat = number
            iatIsString = true
        }
    }
}
