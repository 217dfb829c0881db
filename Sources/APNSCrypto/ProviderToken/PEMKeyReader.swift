/// Finds the key in PEM text and, when there is none, says precisely what was found instead (no PEM at all, a
/// certificate, a public key, an encrypted key), so that a wrong file gives a useful message.
enum PEMKeyReader {
    /// The first private key block (`PRIVATE KEY`, `EC PRIVATE KEY`, `RSA PRIVATE KEY`, ...). An encrypted key
    /// needs `password`.
    static func privateKey(pem: [UInt8], password: String? = nil) throws(CryptoError) -> OpenSSLKey {
        let blocks = try OpenSSLPEM.blocks(in: pem)
        guard !blocks.isEmpty else {
            throw CryptoError.notPEM.with(context: "expected a -----BEGIN PRIVATE KEY----- block")
        }
        guard let block = blocks.first(where: { $0.label.hasSuffix("PRIVATE KEY") }) else {
            throw CryptoError.notAPrivateKey.with(context: "found \(describe(blocks)), expected PRIVATE KEY")
        }
        guard block.label == "ENCRYPTED PRIVATE KEY" || block.isEncrypted else {
            return try OpenSSLKey.privateKey(der: block.der, label: block.label)
        }
        guard let password else {
            throw CryptoError.encryptedKey.with(
                context: "the key is password-protected; give its password or decrypt it")
        }
        return try OpenSSLKey.privateKey(pem: pem, password: password)
    }

    /// The first `PUBLIC KEY` block (DER SubjectPublicKeyInfo).
    static func publicKey(pem: [UInt8]) throws(CryptoError) -> OpenSSLKey {
        let blocks = try OpenSSLPEM.blocks(in: pem)
        guard !blocks.isEmpty else {
            throw CryptoError.notPEM.with(context: "expected a -----BEGIN PUBLIC KEY----- block")
        }
        guard let block = blocks.first(where: { $0.label == "PUBLIC KEY" }) else {
            throw CryptoError.notAPublicKey.with(context: "found \(describe(blocks)), expected PUBLIC KEY")
        }
        return try OpenSSLKey.publicKey(subjectPublicKeyInfo: block.der)
    }

    /// `CERTIFICATE, PUBLIC KEY`: the labels found, without repeats.
    private static func describe(_ blocks: [PEMBlock]) -> String {
        var labels: [String] = []
        for block in blocks where !labels.contains(block.label) { labels.append(block.label) }
        return labels.joined(separator: ", ")
    }
}
