import Foundation

/// A directory's migrations, read in its layout: one migration per version.
struct MigrationFiles {
    var migrations: [Migration] = []
    var skipped: [(file: String, reason: String)] = []
    /// The directory's layout, nil when it holds no migration.
    var layout: MigrationFileLayout?

    /// Reads every `*.sql` file (any case) of `directory`.
    /// - Throws: ``MigrationError`` naming the file for a misnamed, unreadable, non-UTF-8 or
    ///   malformed migration, a down half without its up half, a directory mixing layouts.
    init(directory: String) throws {
        let names: [String]
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else {
            throw MigrationError(.invalidRequest, "the migrations directory \(directory) does not exist")
        }
        guard isDirectory.boolValue else { throw MigrationError(.invalidRequest, "\(directory) is a file, not a migrations directory") }
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        } catch {
            throw MigrationError(.invalidRequest, "cannot read the migrations directory \(directory): \(FileProblem.reason(error))")
        }
        var files: [(name: String, parsed: MigrationFileName)] = []
        for name in names {
            // A name that is not UTF-8 comes back with U+FFFD for its bytes, a path no file has.
            if name.unicodeScalars.contains("\u{FFFD}"), !FileManager.default.fileExists(atPath: (directory as NSString).appendingPathComponent(name)) {
                throw MigrationError(.invalidFile, "a file name in \(directory) is not UTF-8 (shown with U+FFFD where its bytes are not): "
                                     + "\(TerminalText.escaped(name, limit: 200)); rename it")
            }
            if !Migration.isSQLFile(name) {
                skipped.append((name, "not a .sql file"))
            } else if let reason = MigrationFileName.skipReason(name) {
                skipped.append((name, reason))
            } else {
                files.append((name, try MigrationFileName(name)))
            }
        }
        let layouts = MigrationFileLayout.allCases.compactMap { layout in files.first { $0.parsed.layout == layout }.map { (layout, $0.name) } }
        if layouts.count > 1 {
            let examples = layouts.map { "\($0.0.summary): \($0.1)" }.joined(separator: "; ")
            throw MigrationError(.invalidFile, "\(directory) mixes migration file layouts — \(examples); keep one layout per directory")
        }
        layout = layouts.first?.0
        let path = { (name: String) in (directory as NSString).appendingPathComponent(name) }
        if layout == .dbmate {
            let contents = try files.map { try FileProblem.readText(path($0.name)) }
            // No file with a -- migrate: marker: sqlx's simple files, each an up section.
            guard contents.contains(where: MigrationSections.hasMarker) else {
                layout = .plainFiles
                migrations = try zip(files, contents).map { file, text in
                    Migration(version: file.parsed.version, name: file.parsed.name, up: try MigrationSections.whole(text, file: path(file.name)),
                              down: nil, source: path(file.name), downSource: path(file.name), sectionsAreWholeFiles: true)
                }
                return
            }
            migrations = try zip(files, contents).map { try Migration(fileName: $0.name, path: path($0.name), contents: $1) }
            return
        }
        // One file per half: pair them by version.
        var ups: [MigrationVersion: (String, MigrationFileName)] = [:]
        var downs: [MigrationVersion: String] = [:]
        for (name, parsed) in files {
            let existing = parsed.part == .up ? ups[parsed.version]?.0 : downs[parsed.version]
            if let existing {
                throw MigrationError(.duplicateVersion, "\(path(existing)) and \(path(name)) share version \(parsed.version)")
            }
            if parsed.part == .up { ups[parsed.version] = (name, parsed) } else { downs[parsed.version] = name }
        }
        if let orphan = downs.first(where: { ups[$0.key] == nil }) {
            throw MigrationError(.invalidFile, "\(path(orphan.value)) undoes version \(orphan.key), which has no up file")
        }
        migrations = try ups.values.map { name, parsed in
            let up = try MigrationSections.whole(try FileProblem.readText(path(name)), file: path(name))
            let down = try downs[parsed.version].map { try MigrationSections.whole(try FileProblem.readText(path($0)), file: path($0)) }
            return Migration(version: parsed.version, name: parsed.name, up: up, down: down, source: path(name),
                             downSource: downs[parsed.version].map(path) ?? path(name), sectionsAreWholeFiles: true)
        }
    }
}
