import AddressBookKit
import ArgumentParser
import Foundation
import IdentifiedCollections
import Repository
import UnixSignals

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Follow everyone (or one person) live, as any process changes them. Ctrl-C quits.",
        discussion: "On a terminal the view is redrawn in place; piped, each update prints a new view (one JSON object per line with --json); changes that arrive together are shown together.")
    @Argument(help: "A person's id; everyone when left out.") var id: String?
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let id = try id.map(Input.personID)
        let session = try await DemoSession.open()
        defer { session.close() }
        let screen = Screen(json: output.json)
        let quit = QuitSignal()
        let trap = await quit.trapSignals()
        defer { trap.cancel() }
        quit.fireWhenOutputCloses()
        screen.begin()
        defer { screen.end() }
        let subscription: Subscription
        if let id {
            let person = try await session.person(id)
            subscription = person.observe(initial: true) { update in
                guard update.author != .deletion else {
                    screen.show(json: Output.encode(["deleted": id]), text: "Person \(id) was deleted.")
                    return quit.fire()
                }
                screen.show(json: Output.encode(["person": update.new]), text: Output.table(update.new), footer: footer(update.author))
            }
        } else {
            let people = try await session.book.people()
            subscription = people.observe(initial: true) { update in
                let changes = update.changes()
                screen.show(json: Output.encode(PeopleFrame(people: update.new.elements, changes: changes)),
                            text: Output.table(update.new.elements, marks: Set(changes.inserted + changes.updated)),
                            footer: footer(update.author))
            }
        }
        // Outages and failed re-reads go to standard error, so the view never lies silently.
        let errors = Task { [repository = session.book.repository] in
            for await error in repository.errors {
                screen.notice("demo: \(TerminalText.escaped(DemoCommand.redactor.redact("\(error)")))")
            }
        }
        defer { errors.cancel() }
        await quit.wait()
        subscription.cancel()
    }

    private func footer(_ author: Author?) -> String {
        let time = Date().formatted(date: .omitted, time: .standard)
        return "\nWatching — Ctrl-C to quit. Last update \(time)\(author.map { " from \($0)" } ?? "")."
    }
}

/// One `--json` line of `watch` without an id.
struct PeopleFrame: Encodable {
    let people: [Person]
    let changes: CollectionChanges<Int64>
}

/// Where `watch` draws: redrawn in place on a terminal, appended when piped.
final class Screen: Sendable {
    private let json: Bool
    private let isTerminal = isatty(STDOUT_FILENO) == 1
    private let lock = NSLock()

    init(json: Bool) { self.json = json }

    /// Hides the cursor while redrawing in place.
    func begin() {
        if isTerminal, !json { write("\u{1B}[?25l") }
    }

    /// Shows the cursor again, below the last view.
    func end() {
        if isTerminal, !json { write("\u{1B}[?25h\n") }
    }

    func show(json line: String, text: String, footer: String = "") {
        if json { return write(line + "\n") }
        if isTerminal {
            write("\u{1B}[H\u{1B}[2J" + text + "\n" + footer)  // home, clear, draw
        } else {
            write(text + "\n" + footer + "\n\n")
        }
    }

    /// `line` on standard error — on a line of its own: on a terminal the view's last line
    /// (its footer) has no line break, and the notice would be glued to it.
    func notice(_ line: String) {
        lock.lock()
        defer { lock.unlock() }
        if isTerminal, !json { FileHandle.standardOutput.write(Data("\n".utf8)) }
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    private func write(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

/// Ctrl-C (SIGINT), SIGTERM, standard output's reader gone, or `fire()` — whichever comes
/// first ends `wait()`.
final class QuitSignal: Sendable {
    private let state = Locked<(fired: Bool, continuation: CheckedContinuation<Void, Never>?)>((false, nil))

    /// Starts trapping SIGINT and SIGTERM (ServiceLifecycle's `UnixSignalsSequence`), so
    /// they end the wait instead of killing the process.
    func trapSignals() async -> Task<Void, Never> {
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        return Task { [weak self] in
            for await _ in signals {
                self?.fire()
                return
            }
        }
    }

    /// Fires once nobody reads standard output any more (`demo watch | head -3` after `head`
    /// exits, a closed terminal): otherwise the watch would run on, unseen, until the next
    /// change's write ended it with SIGPIPE. A thread of its own waits for that in `poll`,
    /// asking for no event: a pipe's writing end reports an error once its reader is gone, a
    /// terminal a hang-up; a file never reports either.
    /// On Linux only: macOS's `poll` waits for nothing when asked for no event, so there the
    /// watch ends at its next write after the reader left, as before.
    func fireWhenOutputCloses() {
        #if os(Linux)
        Thread.detachNewThread { [weak self] in
            var output = pollfd(fd: STDOUT_FILENO, events: 0, revents: 0)
            while poll(&output, 1, -1) < 0 && errno == EINTR {}
            guard output.revents & Int16(POLLERR | POLLHUP) != 0 else { return }
            self?.fire()
        }
        #endif
    }

    func fire() {
        state.withLock { state in
            state.fired = true
            defer { state.continuation = nil }
            return state.continuation
        }?.resume()
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let fired = state.withLock { state in
                if !state.fired { state.continuation = continuation }
                return state.fired
            }
            if fired { continuation.resume() }
        }
    }
}

/// A value only read or written under its lock.
final class Locked<State>: @unchecked Sendable {  // `state` is only touched under `lock`
    private let lock = NSLock()
    private var state: State
    init(_ state: State) { self.state = state }
    func withLock<R>(_ body: (inout State) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }
}
