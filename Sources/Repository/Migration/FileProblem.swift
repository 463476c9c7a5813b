import Foundation

/// Reading a migration file, with errors that name the file and say what is wrong with it.
enum FileProblem {
    /// The file's text.
    /// - Throws: ``MigrationError`` naming the file: a directory, not a regular file (a named
    ///   pipe, which reading would wait on forever, or a device such as `/dev/zero`, which
    ///   never ends), unreadable (permissions, a symbolic-link loop…), or not UTF-8 (with the
    ///   offending byte's offset). A leading byte-order mark is dropped.
    static func readText(_ path: String) throws -> String {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw MigrationError(.invalidFile, "\(path) is a directory, not a migration file")
        }
        if let kind = notRegular(path) {
            throw MigrationError(.invalidFile, "\(path) is \(kind), not a migration file")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw MigrationError(.invalidFile, "\(path) cannot be read: \(reason(error))")
        }
        // `String(validating:as:)`: Foundation's `String(data:encoding:)` decodes through UTF-16.
        guard let text = String(validating: data, as: UTF8.self) else {
            let offset = firstInvalidUTF8(data).map { " (byte \($0))" } ?? ""
            throw MigrationError(.invalidFile, "\(path) is not valid UTF-8\(offset); save it as UTF-8")
        }
        // A byte-order mark some editors write first is no SQL: the file is read without it.
        if text.unicodeScalars.first == "\u{FEFF}" { return String(text.unicodeScalars.dropFirst()) }
        return text
    }

    /// Creates the file `path`, which must not exist, holding `contents`.
    /// - Throws: ``MigrationError`` naming the file, in the system's words: it exists already,
    ///   or the directory takes no new files (permissions, a read-only or virtual file system
    ///   such as `/proc`), or the file system is full. A file only partly written is removed.
    static func createNew(_ path: String, contents: String) throws {
        let shown = TerminalText.escaped(path, limit: 300)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let code = errno
            if code == EEXIST { throw MigrationError(.invalidRequest, "\(shown) already exists") }
            // A directory that exists and yet says "no such file" is one that makes no files.
            let reason = code == ENOENT ? "this directory takes no new files" : String(cString: strerror(code))
            throw MigrationError(.invalidRequest, "\(shown) cannot be created: \(reason)")
        }
        var failure: Int32?
        Array(contents.utf8).withUnsafeBytes { bytes in
            var written = 0
            while written < bytes.count {
                let count = write(descriptor, bytes.baseAddress! + written, bytes.count - written)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { failure = count < 0 ? errno : EIO; return }
                written += count
            }
        }
        if close(descriptor) != 0, failure == nil, errno != EINTR { failure = errno }
        if let failure {
            unlink(path)
            throw MigrationError(.invalidRequest, "\(shown) cannot be written: \(String(cString: strerror(failure)))")
        }
    }

    /// What the file is when it is not a regular one (symbolic links followed); nil for a
    /// regular file, or one that cannot be looked at (reading it then says why).
    private static func notRegular(_ path: String) -> String? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        switch status.st_mode & S_IFMT {
        case S_IFREG, S_IFDIR: return nil
        case S_IFIFO: return "a named pipe"
        case S_IFCHR, S_IFBLK: return "a device"
        case S_IFSOCK: return "a socket"
        default: return "not a regular file"
        }
    }

    /// The system's words for a file error, without Foundation's dump.
    static func reason(_ error: any Error) -> String {
        let error = error as NSError
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if error.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(error.code))) }
        switch error.code {
        case NSFileReadUnknownError:
            return "unreadable (a symbolic-link loop, or not a regular file?)"
        case NSFileReadNoPermissionError: return "permission denied"
        case NSFileReadNoSuchFileError: return "no such file (a broken or looping symbolic link?)"
        default: return error.localizedFailureReason ?? "error \(error.code)"
        }
    }

    private static func firstInvalidUTF8(_ data: Data) -> Int? {
        var iterator = data.makeIterator()
        var decoder = UTF8()
        var offset = 0
        var consumed = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                offset += UTF8.width(scalar)
                consumed = offset
            case .emptyInput: return nil
            case .error: return consumed
            }
        }
    }
}
