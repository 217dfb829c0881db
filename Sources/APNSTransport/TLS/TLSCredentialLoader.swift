import APNSCrypto
import Foundation

/// A loaded `TLSIdentity`: the leaf, the rest of the chain, the key, each held by the crypto layer's owner classes.
struct TLSLoadedIdentity {
    let leaf: OpenSSLCertificate
    let chain: [OpenSSLCertificate]
    let key: OpenSSLKey
}

/// Loads PEM and PKCS#12 material through APNSCrypto's OpenSSL owners (the one C boundary for certificates, keys
/// and PKCS#12), once, when a context is built (file reads block). Failures are `invalidConfiguration` errors that
/// name the file: `wrong PKCS#12 password: /path/client.p12: …`, `malformed PKCS#12: …`.
enum TLSCredentialLoader {
    static func load(_ identity: TLSIdentity) throws(TransportError) -> TLSLoadedIdentity {
        switch identity {
        case .pemFiles(let chainPath, let keyPath, let passphrase):
            let certificates = try certificates(pem: readFile(chainPath), source: chainPath)
            return try fromPEM(certificates, key: readFile(keyPath), passphrase: passphrase, keySource: keyPath)
        case .pem(let chain, let key, let passphrase):
            let certificates = try certificates(pem: Array(chain.utf8), source: "PEM text")
            return try fromPEM(certificates, key: Array(key.utf8), passphrase: passphrase, keySource: "PEM key text")
        case .pkcs12File(let path, let password):
            return try fromPKCS12(readFile(path), password: password, source: path)
        case .pkcs12(let bytes, let password):
            return try fromPKCS12(bytes, password: password, source: "PKCS#12 bytes")
        }
    }

    /// Every certificate in PEM text, in order; none is a configuration error naming `source`.
    static func certificates(pem: [UInt8], source: String) throws(TransportError) -> [OpenSSLCertificate] {
        do throws(CryptoError) {
            return try OpenSSLCertificate.all(inPEM: pem)
        } catch {
            throw TLSErrorOpenSSL.credential(error, source: source)
        }
    }

    static func readFile(_ path: String) throws(TransportError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TransportError(.invalidConfiguration, "cannot read \(path)")
        }
        return [UInt8](data)
    }

    private static func fromPEM(
        _ certificates: [OpenSSLCertificate], key: [UInt8], passphrase: String?,
        keySource: String
    ) throws(TransportError) -> TLSLoadedIdentity {
        do throws(CryptoError) {
            let privateKey = try OpenSSLKey.privateKey(pem: key, password: passphrase)
            return TLSLoadedIdentity(leaf: certificates[0], chain: Array(certificates.dropFirst()), key: privateKey)
        } catch {
            throw TLSErrorOpenSSL.credential(error, source: keySource)
        }
    }

    /// The archive through `OpenSSLPKCS12`, which checks its MAC first (a wrong password is said as such) and
    /// loads OpenSSL's legacy provider for archives encrypted the old way (Keychain Access: RC2-40, 3DES).
    private static func fromPKCS12(_ bytes: [UInt8], password: String, source: String)
        throws(TransportError) -> TLSLoadedIdentity
    {
        do throws(CryptoError) {
            let contents = try OpenSSLPKCS12.parse(der: bytes, password: password)
            return TLSLoadedIdentity(leaf: contents.certificate, chain: contents.chain, key: contents.key)
        } catch {
            throw TLSErrorOpenSSL.credential(error, source: source)
        }
    }
}
