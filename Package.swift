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
        .executable(name: "migrate", targets: ["Migrate"]),
        .executable(name: "demo", targets: ["demo"]),
        .executable(name: "bench", targets: ["bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/pointfreeco/swift-identified-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
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
                .product(name: "Logging", package: "swift-log"),
            ],
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
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSwift
        ),
        .executableTarget(
            name: "bench",
            dependencies: ["Repository", "CPostgres"],
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
            dependencies: ["Repository"],
            // The generated file holds README snippets, which may leave values unused.
            swiftSettings: strictSwift + [.unsafeFlags(["-suppress-warnings"])],
            plugins: ["ReadmeExamples"]
        ),
        .testTarget(
            name: "RepositoryTests",
            dependencies: [
                "Repository",
                "CPostgres",
                .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
            ],
            swiftSettings: strictSwift
        ),
    ],
    swiftLanguageModes: [.v6]
)
