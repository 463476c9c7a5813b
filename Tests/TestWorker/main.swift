// The test suite's helper process: `test-worker sync …` writes as one process of the
// multi-process convergence test; `test-worker follow …` follows a row from wherever it runs
// (a network namespace of the partition test). Each prints one line per event on standard output.
import Foundation

/// One line on standard output, at once (the test reads it as it comes).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}


/// Wrong arguments.
struct Usage: Error, CustomStringConvertible {
    let description: String
    init(_ usage: String) { description = "usage: test-worker " + usage }
}

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch arguments.first {
    case "sync": try await sync(Array(arguments.dropFirst()))
    case "follow": try await follow(Array(arguments.dropFirst()))
    case "serve": try await serve(Array(arguments.dropFirst()))
    default: throw Usage("sync|follow|serve …")
    }
    exit(0)
} catch {
    FileHandle.standardError.write(Data("test-worker: \(error)\n".utf8))
    exit(2)
}
