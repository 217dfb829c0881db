import APNSCrypto
import APNSTransport

/// How a `MockServer` speaks TLS: the identity it presents (a certificate generated at start-up by a throwaway
/// CA, or one given as PEM), and whether it asks clients for certificates (certificate-based trust).
public struct MockServerTLS: Sendable {
    /// Where the server's certificate comes from.
    public enum Identity: Sendable {
        /// A P-256 leaf for `hosts` (IP literals and DNS names), issued at start-up by `authority` (nil: a fresh
        /// one). Clients trust it through `MockServer.caPEM`.
        case generated(authority: TestCertificateAuthority?, hosts: [String])
        /// A given certificate chain and key.
        case custom(TLSIdentity)
    }

    /// The names a generated certificate covers by default.
    public static let defaultHosts = ["127.0.0.1", "localhost", "::1"]

    /// The certificate and key the server presents.
    public var identity: Identity
    /// CA certificates whose client certificates the server accepts; nil: no client certificate is requested.
    /// A client may still connect without one (token-based trust); one that presents a certificate this CA did
    /// not issue fails the handshake.
    public var clientCertificateTrust: TLSTrustRoots?
    /// Seconds a client gets to complete the handshake.
    public var handshakeTimeout: Double

    /// TLS settings; with `clientCertificateTrust` the server asks for client certificates and checks them.
    public init(identity: Identity, clientCertificateTrust: TLSTrustRoots? = nil, handshakeTimeout: Double = 10) {
        self.identity = identity
        self.clientCertificateTrust = clientCertificateTrust
        self.handshakeTimeout = handshakeTimeout
    }

    /// A certificate generated at start-up for `hosts`, issued by `authority` (nil: a fresh CA).
    public static func generated(
        authority: TestCertificateAuthority? = nil,
        hosts: [String] = defaultHosts,
        clientCertificateTrust: TLSTrustRoots? = nil
    ) -> MockServerTLS {
        MockServerTLS(
            identity: .generated(authority: authority, hosts: hosts), clientCertificateTrust: clientCertificateTrust)
    }

    /// A certificate chain (leaf first) and its key from PEM files.
    public static func pemFiles(
        certificateChain: String,
        privateKey: String,
        clientCertificateTrust: TLSTrustRoots? = nil
    ) -> MockServerTLS {
        MockServerTLS(
            identity: .custom(.pemFiles(certificateChainPath: certificateChain, privateKeyPath: privateKey)),
            clientCertificateTrust: clientCertificateTrust
        )
    }

    /// The server context, and the CA that issued a generated certificate (nil for a custom identity).
    func makeContext() throws(MockServerError) -> (context: TLSServerContext, authority: TestCertificateAuthority?) {
        let tlsIdentity: TLSIdentity
        var issuer: TestCertificateAuthority?
        switch identity {
        case .custom(let given):
            tlsIdentity = given
        case .generated(let authority, let hosts):
            do throws(CryptoError) {
                let ca: TestCertificateAuthority
                if let authority {
                    ca = authority
                } else {
                    ca = try TestCertificateAuthority(commonName: "apns-bulk mock CA")
                }
                let ipAddresses = hosts.filter { SocketAddress.isIPLiteral($0) }
                let dnsNames = hosts.filter { !SocketAddress.isIPLiteral($0) }
                let leaf = try ca.issueLeaf(
                    commonName: dnsNames.first ?? ipAddresses.first ?? "localhost",
                    dnsNames: dnsNames,
                    ipAddresses: ipAddresses,
                    usage: .server
                )
                tlsIdentity = .pem(certificateChain: leaf.chainPEM, privateKey: leaf.privateKeyPEM)
                issuer = ca
            } catch {
                throw MockServerError(.certificate, error.description)
            }
        }
        let policy: TLSClientCertificatePolicy = clientCertificateTrust.map { .optional(trustRoots: $0) } ?? .none
        var configuration = TLSServerConfiguration(identity: tlsIdentity, clientCertificates: policy)
        configuration.handshake.timeout = handshakeTimeout
        do throws(TransportError) {
            return (try TLSServerContext(configuration), issuer)
        } catch {
            throw MockServerError(.tls, error.description)
        }
    }
}
