// swift-tools-version:6.2
import PackageDescription

let strictSwift: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "swift-live-postgres",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Repository", targets: ["Repository"]),
        .library(name: "AddressBookKit", targets: ["AddressBookKit"]),
        .executable(name: "migrate", targets: ["Migrate"]),
        .executable(name: "demo", targets: ["demo"]),
        .executable(name: "bench", targets: ["bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/pointfreeco/swift-identified-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CPostgres",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        .target(
            name: "Repository",
            dependencies: [
                "CPostgres",
                .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strictSwift
        ),
        // The demo's domain (Person, Address, AddressBook), kept out of the library. A library
        // target, named apart from its AddressBook class so qualified names work, so that the demo, the
        // tests and the benchmark import it alike (no executable-as-test-dependency tricks).
        .target(
            name: "AddressBookKit",
            dependencies: [
                "Repository",
                .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
            ],
            resources: [.copy("Migrations")],
            swiftSettings: strictSwift
        ),
        .executableTarget(
            name: "Migrate",
            dependencies: [
                "Repository",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSwift
        ),
        .executableTarget(
            name: "demo",
            dependencies: [
                "Repository",
                "AddressBookKit",
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSwift
        ),
        .executableTarget(
            name: "bench",
            dependencies: [
                "Repository", "CPostgres",
                .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
            ],
            swiftSettings: strictSwift
        ),
        // The tests' helper process: a writer of the multi-process convergence test, or a
        // follower of one row from inside the partition test's network namespace.
        .executableTarget(
            name: "test-worker",
            dependencies: [
                "Repository",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/TestWorker",
            swiftSettings: strictSwift
        ),
        .executableTarget(
            name: "ReadmeExampleExtractor",
            swiftSettings: strictSwift
        ),
        .plugin(
            name: "ReadmeExamples",
            capability: .buildTool(),
            dependencies: ["ReadmeExampleExtractor"]
        ),
        .testTarget(
            name: "ReadmeExamplesTests",
            dependencies: [
                "Repository", "AddressBookKit",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The generated file holds README snippets, which may leave values unused.
            swiftSettings: strictSwift + [.unsafeFlags(["-suppress-warnings"])],
            plugins: ["ReadmeExamples"]
        ),
        // Test-only: ThreadSanitizer suppressions for a dependency's lock it cannot see.
        .target(name: "SanitizerSettings", path: "Tests/SanitizerSettings", exclude: ["tsan-suppressions.txt"]),
        .testTarget(
            name: "RepositoryTests",
            dependencies: [
                "SanitizerSettings",
                "Repository",
                "AddressBookKit",
                "CPostgres",
                .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The address book's migrations as they were before the library owned the live
            // schema: an upgrade test applies them, then the library's install.
            exclude: ["LiveSchema/OldDemoMigrations", "LiveSchema/SchemaVersion1", "LiveSchema/SchemaVersion2"],
            swiftSettings: strictSwift
        ),
    ],
    swiftLanguageModes: [.v6]
)
