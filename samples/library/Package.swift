// swift-tools-version:6.0
// A separate package that uses apns-bulk as a library (README "Use it as a library"). scripts/library-test.sh
// builds it against a tagged copy of apns-bulk and runs it against the mock.
import PackageDescription

let package = Package(
    name: "SendFromSwift",
    dependencies: [
        // Your copy of apns-bulk and one of its version tags.
        .package(url: "https://example.com/your-copy-of/apns-bulk.git", from: "1.0.0")
    ],
    targets: [
        .executableTarget(
            name: "SendFromSwift",
            dependencies: [
                .product(name: "APNSBulk", package: "apns-bulk"),
                .product(name: "APNSCore", package: "apns-bulk"),
                .product(name: "APNSCrypto", package: "apns-bulk"),
                .product(name: "APNSPipeline", package: "apns-bulk"),
                .product(name: "APNSTransport", package: "apns-bulk"),
            ]
        )
    ]
)
