import Foundation
@testable import Repository

/// Runs SQL through psql: another OS process, as a user at a terminal would.
func psql(_ sql: String, database: Database) async throws {
    let binaries = try await ServerBinaries.locate()
    let directory = URL(fileURLWithPath: binaries.initdb).resolvingSymlinksInPath().deletingLastPathComponent()
    let arguments = ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", try await TestServer.connectionString(database: database.name()), "-c", sql]
    let run = try await ChildProcess(directory.appendingPathComponent("psql").path, arguments, environment: ProcessInfo.processInfo.environment).completion()
    guard run.status == 0 else { throw TestSetupError("psql failed: \(sql): \(String(decoding: run.errors, as: UTF8.self))") }
}
