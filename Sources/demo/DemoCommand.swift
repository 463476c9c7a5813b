import AddressBookKit
import ArgumentParser
import Foundation
import Repository

/// `demo`: an address book on PostgreSQL whose `watch` view follows edits made anywhere.
@main
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "An address book on PostgreSQL, with a live `watch` view.",
        discussion: """
            The database is DATABASE_URL if set; otherwise a PostgreSQL server of the demo's own, \
            in a per-user data directory, started on first use and left running so that other \
            terminals share it (`demo db stop` stops it). Migrations are applied on every run.

            Try `demo watch` in one terminal and `demo add Ada --street "12 St James's Square"` \
            in another.
            """,
        subcommands: [Add.self, List.self, Show.self, Rename.self, AddAddress.self, RemoveAddress.self,
                      Delete.self, Watch.self, DatabaseCommand.self])

    /// Removes the passwords of the arguments and the environment from everything printed.
    static let redactor = SecretRedactor(scanning: CommandLine.arguments, environment: ProcessInfo.processInfo.environment)

    /// Runs the command; any failure is one line on standard error and a non-zero exit.
    static func main() async {
        do {
            try ArgumentEncoding.refuseInvalidUTF8()
            var command = try parseAsRoot()
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
            exitIfOutputLost()
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                print(fullMessage(for: error))  // --help
            } else {
                FileHandle.standardError.write(Data("demo: \(TerminalText.escaped(redactor.redact(oneLine(error))))\n".utf8))
            }
            exitIfOutputLost()
            Foundation.exit(code.rawValue)
        }
    }

    /// What `print` buffered could not be written (a full disk, a closed descriptor): the
    /// command fails rather than report success with its output lost (a stranger's run). A
    /// closed pipe (`demo list | head -1`) is not a failure: the reader has what it wanted.
    private static func exitIfOutputLost() {
        // Every stream flushed: a failed write leaves its bytes buffered, so this fails too.
        errno = 0
        guard fflush(nil) != 0, errno != EPIPE else { return }
        let reason = errno == 0 ? "a write failed" : String(cString: strerror(errno))
        FileHandle.standardError.write(Data("demo: could not write standard output (\(reason)); what the command did is not all shown\n".utf8))
        Foundation.exit(74)  // EX_IOERR
    }

    private static func oneLine(_ error: any Error) -> String {
        let message: String
        switch error {
        case let error as AddressBookError: message = error.description
        case let error as LiveRecordError: message = error.description
        case let error as PostgresError: message = error.description
        case let error as LocalServerError: message = "\(error)"
        case let error as MigrationError: message = error.message
        case let error as DemoError: message = error.message
        case let error as ArgumentEncoding.Invalid: message = error.description
        default:
            // A negative number reads as an option to the argument parser ("Missing expected
            // argument"): say what is wrong with it instead.
            if let negative = CommandLine.arguments.dropFirst().first(where: isNegativeNumber) {
                message = "'\(negative)' is not an id: a person's id is a positive number, as `demo list` shows; an address's is its id's start, as `demo show` prints it"
            } else {
                message = self.message(for: error)
            }
        }
        return message.split(separator: "\n").first.map(String.init) ?? message
    }

    private static func isNegativeNumber(_ argument: String) -> Bool {
        argument.count > 1 && argument.first == "-" && argument.dropFirst().allSatisfy(\.isASCII) && Int64(argument) != nil
    }
}

/// A mistake in what the user asked for.
struct DemoError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// `--json`, shared by the commands that print something.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print JSON instead of a table.")
    var json = false
}
