import Repository

/// Lets the options every command shares come before the command, as with `git` or `docker`:
/// `migrate --database-url URL status` is read as `migrate status --database-url URL`.
/// (ArgumentParser takes a subcommand's options only after its name.)
enum LeadingOptions {
    /// The shared options that take a value.
    static let withValue: Set<String> = ["--database-url", "--dir", "--history-table", "--lock-timeout"]
    /// The shared flags.
    static let flags: Set<String> = ["--allow-out-of-order"]

    /// `arguments` (without the program's name) with the shared options found before the first
    /// other argument moved to the end (before a `--`, if there is one). Anything else is left
    /// as it was, for ArgumentParser to accept or refuse.
    /// - Throws: ``MigrateFailure`` when an option comes both before and after the command:
    ///   which one was meant cannot be told; when what follows them is no command of `commands`
    ///   (moved after it, the options would be refused instead, as unknown).
    static func movedAfterCommand(_ arguments: [String], commands: Set<String>) throws -> [String] {
        var leading: [String] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            if flags.contains(argument) || (withValue.contains(name) && argument.contains("=")) {
                leading.append(argument)
                index += 1
            } else if withValue.contains(argument), index + 1 < arguments.endIndex {
                leading += [argument, arguments[index + 1]]
                index += 2
            } else {
                break
            }
        }
        guard !leading.isEmpty else { return arguments }
        var rest = Array(arguments[index...])
        // `help` takes none of them: it shows the command after it.
        if rest.first == "help" { return rest }
        if let command = rest.first, !command.hasPrefix("-"), !commands.contains(command) {
            throw MigrateFailure("unknown command '\(TerminalText.escaped(command, limit: 80))'; the commands are \(commands.sorted().joined(separator: ", "))")
        }
        let after = Set(rest.prefix { $0 != "--" }.map { String($0.split(separator: "=", maxSplits: 1).first ?? "") })
        if let twice = leading.first(where: { $0.hasPrefix("--") && after.contains(String($0.split(separator: "=", maxSplits: 1).first ?? "")) }) {
            let name = twice.split(separator: "=", maxSplits: 1).first.map(String.init) ?? twice
            throw MigrateFailure("\(name) is given both before and after the command: give it once")
        }
        rest.insert(contentsOf: leading, at: rest.firstIndex(of: "--") ?? rest.endIndex)
        return rest
    }
}
