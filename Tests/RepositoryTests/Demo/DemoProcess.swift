import Foundation
@testable import Repository
import Testing

/// The built `demo` executable, run as a separate OS process the way a user runs it.
struct DemoProcess {
    struct Run {
        var status: Int32
        var output: String
        var errors: String
    }

    static var executable: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("demo").path
    }

    /// Variables set for the demo on top of this process's environment (minus DATABASE_URL).
    let environment: [String: String]

    /// Runs `demo arguments…` to completion.
    func run(_ arguments: String...) async throws -> Run {
        try await run(arguments)
    }

    /// Runs `demo` with these arguments to completion.
    func run(_ arguments: [String]) async throws -> Run {
        let completion = try await launch(arguments).completion()
        return Run(status: completion.status, output: String(decoding: completion.output, as: UTF8.self),
                   errors: String(decoding: completion.errors, as: UTF8.self))
    }

    /// Runs `demo arguments…` and waits, blocking: for clean-up in a `defer`, which cannot await.
    /// Only for commands that print a line or two (a full pipe would stop the child).
    func cleanUp(_ arguments: String...) {
        _ = try? launch(arguments).wait()
    }

    /// Runs `demo arguments…` to completion; when it fails, records its status and standard
    /// error, so that a failure says why.
    @discardableResult
    func succeeds(_ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) async throws -> Bool {
        let run = try await run(arguments)
        #expect(run.status == 0, "demo \(arguments) exited with \(run.status): \(run.errors)", sourceLocation: sourceLocation)
        return run.status == 0
    }

    /// Runs `demo arguments…` and decodes its JSON output.
    func json<T: Decodable>(_ type: T.Type, _ arguments: String...) async throws -> T {
        let run = try await run(arguments)
        guard run.status == 0 else { throw TestSetupError("demo \(arguments) exited with \(run.status): \(run.errors)") }
        return try JSONDecoder().decode(T.self, from: Data(run.output.utf8))
    }

    /// Starts a long-running `demo` (such as `watch`) whose output lines are collected as they come.
    func start(_ arguments: String...) throws -> (process: ChildProcess, output: Recorder<String>) {
        let child = try launch(arguments)
        let lines = Recorder<String>()
        child.readOutputLines { lines.append($0) }
        return (child, lines)
    }

    /// Starts `demo arguments… | head -n lines` in bash, the pipeline's status the demo's when it
    /// fails (`pipefail`); `timeout` ends a demo still running after a minute.
    func piped(intoHeadOf lines: Int, _ arguments: String...) throws -> ChildProcess {
        let inherited = ProcessInfo.processInfo.environment.filter { $0.key != "DATABASE_URL" }
        return try ChildProcess("/bin/bash", ["-c", "set -o pipefail; timeout 60 \"$0\" \"$@\" | head -n \(lines)", Self.executable] + arguments,
                                environment: inherited.merging(environment) { $1 })
    }

    private func launch(_ arguments: [String]) throws -> ChildProcess {
        let inherited = ProcessInfo.processInfo.environment.filter { $0.key != "DATABASE_URL" }
        return try ChildProcess(Self.executable, arguments, environment: inherited.merging(environment) { $1 })
    }
}
