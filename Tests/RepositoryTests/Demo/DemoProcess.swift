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
    func run(_ arguments: String...) throws -> Run {
        try run(arguments)
    }

    /// Runs `demo` with these arguments to completion.
    func run(_ arguments: [String]) throws -> Run {
        let child = try launch(arguments)
        // Standard error on another thread, so a child filling one pipe never blocks on it.
        let errors = Locked(Data())
        let errorsRead = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            errors.withLock { $0 = child.readErrors() }
            errorsRead.signal()
        }
        let output = child.readOutput()
        let status = child.wait()
        errorsRead.wait()
        return Run(status: status, output: String(decoding: output, as: UTF8.self),
                   errors: String(decoding: errors.withLock { $0 }, as: UTF8.self))
    }

    /// Runs `demo arguments…` to completion; when it fails, records its status and standard
    /// error, so that a failure says why.
    @discardableResult
    func succeeds(_ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) throws -> Bool {
        let run = try run(arguments)
        #expect(run.status == 0, "demo \(arguments) exited with \(run.status): \(run.errors)", sourceLocation: sourceLocation)
        return run.status == 0
    }

    /// Runs `demo arguments…` and decodes its JSON output.
    func json<T: Decodable>(_ type: T.Type, _ arguments: String...) throws -> T {
        let run = try run(arguments)
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

    private func launch(_ arguments: [String]) throws -> ChildProcess {
        let inherited = ProcessInfo.processInfo.environment.filter { $0.key != "DATABASE_URL" }
        return try ChildProcess(Self.executable, arguments, environment: inherited.merging(environment) { $1 })
    }
}
