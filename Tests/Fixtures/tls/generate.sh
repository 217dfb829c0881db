#!/usr/bin/env bash
# Regenerates the TLS test fixtures in this folder with the openssl CLI. GENERATED TEST MATERIAL: none of these
# keys protects anything; never use them outside the test suite. Run from anywhere: bash generate.sh
set -euo pipefail
cd "$(dirname "$0")"
rm -f ./*.pem ./*.key ./*.p12 ./*.srl ./*.csr ./*.ext pins.txt
DAYS=36500
TAG="generated test material"

ec_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

# Root CA (trusted by the tests' clients and by the client-certificate-verifying server).
ec_key root-ca.key
openssl req -x509 -new -key root-ca.key -days $DAYS -subj "/O=apns-bulk tests/CN=apns-bulk Test Root CA ($TAG)" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" -out root-ca.pem

# Intermediate CA, signed by the root; servers send it along with their leaf.
ec_key intermediate-ca.key
openssl req -new -key intermediate-ca.key -subj "/O=apns-bulk tests/CN=apns-bulk Test Intermediate CA ($TAG)" \
    -out intermediate-ca.csr
printf 'basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\n' > ca.ext
openssl x509 -req -in intermediate-ca.csr -CA root-ca.pem -CAkey root-ca.key -CAcreateserial -days $DAYS \
    -extfile ca.ext -out intermediate-ca.pem 2>/dev/null

leaf() { # name key-file subject extensions
    openssl req -new -key "$2" -subj "$3" -out "$1.csr"
    printf '%b' "$4" > "$1.ext"
    openssl x509 -req -in "$1.csr" -CA intermediate-ca.pem -CAkey intermediate-ca.key -CAcreateserial -days $DAYS \
        -extfile "$1.ext" -out "$1.pem" 2>/dev/null
}

SERVER_EXT='basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\n'
# Server leaf (EC P-256) for localhost, 127.0.0.1 and ::1; server-chain.pem = leaf + intermediate.
ec_key server.key
leaf server server.key "/O=apns-bulk tests/CN=localhost ($TAG)" "$SERVER_EXT"
cat server.pem intermediate-ca.pem > server-chain.pem

# Server leaf with an RSA key (for the TLS 1.2 cipher-policy tests: RSA key exchange must be refused).
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out server-rsa.key 2>/dev/null
leaf server-rsa server-rsa.key "/O=apns-bulk tests/CN=localhost RSA ($TAG)" "$SERVER_EXT"
cat server-rsa.pem intermediate-ca.pem > server-rsa-chain.pem

# Client certificate (certificate-based trust): subject UID is the topic, as in Apple's push certificates.
ec_key client.key
leaf client client.key "/UID=com.example.app/O=apns-bulk tests/CN=Apple Push Services: com.example.app ($TAG)" \
    'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n'
cat client.pem intermediate-ca.pem > client-chain.pem
openssl pkcs12 -export -inkey client.key -in client.pem -certfile intermediate-ca.pem \
    -passout pass:apns-test -name "apns-bulk test client" -out client.p12
# The same, with the legacy RC2/3DES encryption Keychain Access exports (needs OpenSSL's legacy provider).
openssl pkcs12 -export -legacy -inkey client.key -in client.pem -certfile intermediate-ca.pem \
    -passout pass:apns-test -name "apns-bulk test client" -out client-legacy.p12

# An unrelated CA (for "wrong CA" tests) and a leaf it signed for 127.0.0.1.
ec_key other-ca.key
openssl req -x509 -new -key other-ca.key -days $DAYS -subj "/O=unrelated tests/CN=Unrelated Test CA ($TAG)" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" -out other-ca.pem

# SPKI-SHA256-BASE64 pins, computed with the command from APNS.md (independently of the code under test).
for name in root-ca intermediate-ca server server-rsa client other-ca; do
    pin=$(openssl x509 -noout -pubkey -in "$name.pem" | openssl pkey -pubin -outform der \
        | openssl dgst -sha256 -binary | openssl enc -base64)
    echo "$name $pin" >> pins.txt
done

rm -f ./*.csr ./*.ext ./*.srl
echo "generated: $(ls)"
