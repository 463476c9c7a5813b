// swift-tools-version:6.2
// README's "Your own tables" as a package of its own: a user's application with a table keyed
// by two columns, outside this repository's targets. Its main.swift is README's block, word for
// word (a test checks), and a test runs it against a real PostgreSQL.
import PackageDescription

let package = Package(
    name: "OwnTables",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "swift-live-postgres", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "OwnTables",
            dependencies: [.product(name: "Repository", package: "swift-live-postgres")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
