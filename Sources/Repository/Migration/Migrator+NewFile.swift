public import Foundation

extension Migrator {
    /// Creates the next migration in `directory`, in the directory's layout, and returns its
    /// path (the up file's, when the layout has two): dbmate's one file with empty up and down
    /// sections, golang-migrate's and sqlx's `.up.sql` and `.down.sql`, sqlx's simple file with
    /// no markers (where the directory's files have none), or Flyway's
    /// `V<next>__name.sql`. Versions continue the directory's style: sequence numbers
    /// (`0008_…`), or UTC timestamps (`20240229134506_…`) when the files use them.
    public static func createFile(named name: String, in directory: String, now: Date = Date()) throws -> String {
        // A connection string given as the name (arguments in the wrong place) would put its
        // password into the file name, and every listing of it.
        if name.contains("://") || SecretRedactor(scanning: [name]).redact(name) != name {
            throw MigrationError(.invalidRequest, "the name looks like a connection string, which may hold a password: name the migration after what it does (migrate new add_email)")
        }
        let slug = name.lowercased().map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined()
        guard slug.contains(where: { $0 != "_" }) else { throw MigrationError(.invalidRequest, "a migration needs a name with letters or digits") }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw MigrationError(.invalidRequest, "\(TerminalText.escaped(directory, limit: 300)) is a file, not a directory of migrations")
        }
        func cannotHold(_ error: any Error) -> MigrationError {
            MigrationError(.invalidRequest, "\(TerminalText.escaped(directory, limit: 300)) cannot hold migrations: \(FileProblem.reason(error))")
        }
        let listed: [String]
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw cannotHold(error)
        }
        // Held from listing the files to creating the new ones: two `migrate new` at once in one
        // directory take versions one after the other, never the same one.
        let lock = open(directory, O_RDONLY | O_CLOEXEC)
        if lock >= 0 { _ = flock(lock, LOCK_EX) }
        defer { if lock >= 0 { close(lock) } }
        do {
            listed = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw cannotHold(error)
        }
        let existing = listed.compactMap { file in
            Migration.isSQLFile(file) ? (try? MigrationFileName(file)).map { (file, $0) } : nil
        }
        var layout = existing.first?.1.layout ?? .dbmate
        let path = { (name: String) in (directory as NSString).appendingPathComponent(name) }
        if layout == .dbmate, !existing.isEmpty,
           !existing.contains(where: { (try? FileProblem.readText(path($0.0))).map(MigrationSections.hasMarker) ?? true }) {
            layout = .plainFiles
        }
        // A version this tool could not read back (see ``MigrationVersion``) is refused, not made.
        func checked(_ version: String) throws -> String {
            guard version.count <= 18 else {
                throw MigrationError(.invalidRequest, "the next version would be \(version), over the 18 digits a version may have: "
                                     + "renumber the newest migration, or start a directory of its own")
            }
            return version
        }
        let files: [(name: String, contents: String)]
        if layout == .flyway {
            let next = try checked(String((existing.map { $0.1.version.parts[0] }.max() ?? 0) + 1))
            files = [("V\(next)__\(slug).sql", "\n")]
        } else {
            let numbered = existing.map { (digits: $0.0.prefix { $0.isNumber }.count, version: $0.1.version.parts[0]) }
            var version: String
            if numbered.contains(where: { $0.digits >= 14 }) {
                var calendar = Calendar(identifier: .gregorian)
                calendar.timeZone = TimeZone(identifier: "UTC")!
                let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: now)
                let stamp = String(format: "%04d%02d%02d%02d%02d%02d", parts.year!, parts.month!, parts.day!, parts.hour!, parts.minute!, parts.second!)
                // Two files in one second, or a clock behind the newest file: one past the newest,
                // so that the new file is last and its version its own.
                let newest = numbered.map(\.version).max() ?? 0
                version = Int64(stamp).map { $0 > newest } ?? true ? stamp : String(newest + 1)
            } else {
                let next = (numbered.map(\.version).max() ?? 0) + 1
                let width = max(layout == .dbmate ? 4 : 6, numbered.map(\.digits).max() ?? 0)
                version = String(repeating: "0", count: max(0, width - String(next).count)) + String(next)
            }
            version = try checked(version)
            files = switch layout {
            case .dbmate: [("\(version)_\(slug).sql", "-- migrate:up\n\n\n-- migrate:down\n\n")]
            case .plainFiles: [("\(version)_\(slug).sql", "\n")]
            case .upDownFiles, .flyway: [("\(version)_\(slug).up.sql", "\n"), ("\(version)_\(slug).down.sql", "\n")]
            }
        }
        // Most file systems take names of up to 255 bytes.
        if let long = files.first(where: { $0.name.utf8.count > 255 }) {
            throw MigrationError(.invalidRequest, "the file name would be \(long.name.utf8.count) bytes long, more than the 255 a file name may have: give the migration a shorter name")
        }
        // Created exclusively, so that a file made meanwhile (another `migrate new`) is never
        // overwritten; when the second of two cannot be made, the first is taken back.
        let paths = files.map { path($0.name) }
        var created: [String] = []
        for (path, file) in zip(paths, files) {
            do {
                try FileProblem.createNew(path, contents: file.contents)
                created.append(path)
            } catch {
                for made in created { unlink(made) }
                throw error
            }
        }
        return paths[0]
    }
}
