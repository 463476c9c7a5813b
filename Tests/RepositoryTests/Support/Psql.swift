import Foundation
@testable import Repository

/// Runs SQL through psql: another OS process, as a user at a terminal would.
func psql(_ sql: String, database: Database) async throws {
    let binaries = try await ServerBinaries.locate()
    let directory = URL(fileURLWithPath: binaries.initdb).resolvingSymlinksInPath().deletingLastPathComponent()
    let process = Process()
    process.executableURL = directory.appendingPathComponent("psql")
    process.arguments = ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", try await TestServer.connectionString(database: database.name()), "-c", sql]
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw TestSetupError("psql failed: \(sql)") }
}
