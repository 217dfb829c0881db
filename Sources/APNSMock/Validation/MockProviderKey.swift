import APNSCrypto

/// One signing key the mock knows: its 10-character key id, the team it belongs to, and the public half of the
/// team's `.p8` key, which verifies the ES256 signatures of tokens naming this key id.
public struct MockProviderKey: Sendable {
    public let keyID: String
    public let teamID: String
    public let publicKey: ProviderPublicKey

    public init(keyID: String, teamID: String, publicKey: ProviderPublicKey) {
        self.keyID = keyID
        self.teamID = teamID
        self.publicKey = publicKey
    }
}
