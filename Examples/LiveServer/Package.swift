// swift-tools-version:6.2
// An HTTP server over live rows: the address book as JSON and as a live page, writes through
// live handles, and changes — made by any process — streamed as Server-Sent Events.
import PackageDescription

let package = Package(
    name: "LiveServer",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "swift-live-postgres", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/pointfreeco/swift-identified-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .executableTarget(
            name: "LiveServer",
            dependencies: [
                .product(name: "Repository", package: "swift-live-postgres"),
                .product(name: "AddressBookKit", package: "swift-live-postgres"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            resources: [.copy("Page")],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
