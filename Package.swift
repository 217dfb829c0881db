// swift-tools-version:6.0
// apns-bulk: send Apple Push Notifications in bulk, from files.
//
// The target graph is the architecture:
//   CNghttp2, COpenSSL   system libraries (C only); CLinux: epoll and eventfd headers
//   COpenSSLInit         C: initialises OpenSSL before main, without its atexit cleanup
//   APNSCore             tokens, notifications, payload rules, reasons and what each means (Foundation only)
//   APNSCrypto           .p8 keys, ES256 JWTs, provider-token cache, SPKI pins, certificates (core + OpenSSL)
//   APNSHTTP2            HTTP/2 over nghttp2, both roles: sessions, header field lists, events (core + CNghttp2)
//   APNSTransport        event loop, sockets, TLS, proxy, client connection and pool (core + crypto + HTTP/2 + C)
//   APNSMock             the mock APNs server (core + crypto + HTTP/2's server role + transport's TLS and listener)
//   APNSPipeline         readers, validation, dispatcher, retries, results, resume, replay, prune (core only)
//   APNSBulk             the library's front: PushSender (notifications from Swift code) and the engine a campaign
//                        runs on (pipeline + transport)
//   APNSBulkCLI          argument parsing and wiring (signals, progress, files around a run)
//   apns-bulk            the executable: calls APNSBulkCLI
import PackageDescription

// Linux only: the event loop is epoll and eventfd (Sources/CLinux), so no Apple platform is declared; a build
// elsewhere stops at CLinux's headers. No target carries unsafe flags, so a package can depend on this one by version.
let package = Package(
    name: "apns-bulk",
    products: [
        .executable(name: "apns-bulk", targets: ["apns-bulk"]),
        .library(name: "APNSCore", targets: ["APNSCore"]),
        .library(name: "APNSCrypto", targets: ["APNSCrypto"]),
        .library(name: "APNSHTTP2", targets: ["APNSHTTP2"]),
        .library(name: "APNSTransport", targets: ["APNSTransport"]),
        .library(name: "APNSPipeline", targets: ["APNSPipeline"]),
        .library(name: "APNSMock", targets: ["APNSMock"]),
        .library(name: "APNSBulk", targets: ["APNSBulk"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0")
    ],
    targets: [
        .systemLibrary(
            name: "CNghttp2",
            pkgConfig: "libnghttp2",
            providers: [.apt(["libnghttp2-dev"]), .brew(["nghttp2"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        .systemLibrary(name: "CLinux"),
        // A load-time constructor that initialises OpenSSL without its atexit cleanup (see openssl_init.c).
        .target(name: "COpenSSLInit", dependencies: ["COpenSSL"]),
        .target(name: "APNSCore"),
        .target(name: "APNSCrypto", dependencies: ["APNSCore", "COpenSSL", "COpenSSLInit"]),
        .target(name: "APNSHTTP2", dependencies: ["APNSCore", "CNghttp2"]),
        .target(
            name: "APNSTransport", dependencies: ["APNSCore", "APNSCrypto", "APNSHTTP2", "COpenSSL", "CLinux"]
        ),
        .target(
            name: "APNSMock", dependencies: ["APNSCore", "APNSCrypto", "APNSHTTP2", "APNSTransport"]
        ),
        .target(name: "APNSPipeline", dependencies: ["APNSCore"]),
        .target(name: "APNSBulk", dependencies: ["APNSCore", "APNSTransport", "APNSPipeline"]),
        .target(
            name: "APNSBulkCLI",
            dependencies: [
                "APNSCore", "APNSCrypto", "APNSTransport", "APNSPipeline", "APNSBulk", "APNSMock", "CLinux",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "apns-bulk", dependencies: ["APNSBulkCLI"]),
        .testTarget(name: "APNSCoreTests", dependencies: ["APNSCore"]),
        .testTarget(name: "APNSCryptoTests", dependencies: ["APNSCore", "APNSCrypto"]),
        .testTarget(
            name: "APNSTransportTests", dependencies: ["APNSCore", "APNSCrypto", "APNSHTTP2", "APNSTransport"]),
        .testTarget(
            name: "APNSMockTests", dependencies: ["APNSCore", "APNSCrypto", "APNSHTTP2", "APNSTransport", "APNSMock"]
        ),
        // In-memory byte sources and sinks for the pipeline's tests and fuzz targets (not part of the library).
        .target(name: "PipelineTestSupport", dependencies: ["APNSPipeline"], path: "Tests/PipelineTestSupport"),
        .testTarget(name: "APNSPipelineTests", dependencies: ["APNSCore", "APNSPipeline", "PipelineTestSupport"]),
        // A TCP relay that adds a round-trip time on loopback, for the benchmarks and the soak at a real RTT (not
        // part of the product: built by scripts/bench.sh and scripts/soak.sh).
        .executableTarget(
            name: "rtt-relay",
            dependencies: ["APNSTransport", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Tests/Bench/RTTRelay"
        ),
        .testTarget(name: "RTTRelayTests", dependencies: ["rtt-relay", "APNSTransport"]),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["APNSCore", "APNSCrypto", "APNSHTTP2", "APNSTransport", "APNSMock", "APNSPipeline"]
        ),
        .testTarget(name: "EndToEndTests", dependencies: ["APNSCore"]),
        .testTarget(
            name: "APNSBulkCLITests",
            dependencies: ["APNSBulkCLI", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// libFuzzer targets, one per parser (Tests/Fuzz/<name>/), each run by libFuzzer's driver (FuzzDriver): declared
// only when APNS_BULK_FUZZ=1, because they link only with -sanitize=fuzzer. scripts/fuzz.sh builds and runs them.
if Context.environment["APNS_BULK_FUZZ"] == "1" {
    package.targets.append(.target(name: "FuzzDriver", path: "Tests/Fuzz/FuzzDriver"))
    let fuzzTargets: [(name: String, dependencies: [Target.Dependency])] = [
        ("JSONScanner", ["APNSCore"]),
        ("NDJSONRecord", ["APNSCore", "APNSPipeline", "PipelineTestSupport"]),
        ("CSVRecord", ["APNSCore", "APNSPipeline", "PipelineTestSupport"]),
        ("PayloadTemplate", ["APNSCore", "APNSPipeline"]),
        ("ResultLine", ["APNSPipeline", "PipelineTestSupport"]),
        ("ProxyResponse", ["APNSTransport"]),
        ("MillisecondTime", ["APNSPipeline"]),
        ("KeptValue", ["APNSCore", "APNSPipeline", "PipelineTestSupport"]),
        ("KeptFields", ["APNSCore", "APNSPipeline"]),
    ]
    for target in fuzzTargets {
        package.targets.append(
            .executableTarget(
                name: "Fuzz\(target.name)", dependencies: target.dependencies + ["FuzzDriver"],
                path: "Tests/Fuzz/\(target.name)", exclude: ["corpus"]
            ))
        package.products.append(.executable(name: "Fuzz\(target.name)", targets: ["Fuzz\(target.name)"]))
    }
}
