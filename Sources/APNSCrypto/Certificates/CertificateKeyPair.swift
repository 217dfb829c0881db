/// A client or server certificate chain with the private key of its leaf, read from PEM files: the chain and the
/// key in two files, or both in one file (as curl's `--cert` accepts: certificates and key blocks in any order).
/// Reading it up front turns a wrong file into one precise error before any connection is tried.
public struct CertificateKeyPair: Sendable {
    /// The certificates, leaf first.
    public let chain: CertificateChain
    /// The leaf's private key.
    public let privateKey: PrivateKeyPEM
    /// The file the chain was read from.
    public let chainPath: String
    /// The file the key was read from: `keyPath`, or the chain's file when no key file was given.
    public let keyPath: String

    /// Reads the chain from `chainPath` and the key from `keyPath`, or from `chainPath` too when `keyPath` is nil.
    /// Throws `notAPrivateKey` when a chain file read for its key holds none, `keyDoesNotMatchCertificate` when
    /// the key is not the leaf's, and the errors of `CertificateChain` and `PrivateKeyPEM`; every error names its
    /// file.
    public init(chainPath: String, keyPath: String? = nil) throws(CryptoError) {
        chain = try CertificateChain(contentsOfFile: chainPath)
        let keyFile = keyPath ?? chainPath
        do {
            privateKey = try PrivateKeyPEM(contentsOfFile: keyFile)
        } catch  where keyPath == nil && (error == .notAPrivateKey || error == .notPEM) {
            throw CryptoError.notAPrivateKey.with(
                context: """
                    \(chainPath): a certificate chain without a private key: append the key to this file, or give the \
                    key's own file
                    """)
        }
        self.chainPath = chainPath
        self.keyPath = keyFile
        guard privateKey.matches(chain.leaf) else {
            throw CryptoError.keyDoesNotMatchCertificate.with(
                context: "\(keyFile): the key is not the key of the certificate \(chain.leaf.label) in \(chainPath)")
        }
    }

    /// Whether the key was read from the chain's own file (a combined PEM).
    public var keyIsInChainFile: Bool { keyPath == chainPath }
}
