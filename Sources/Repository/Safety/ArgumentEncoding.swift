import Foundation

/// Command-line arguments must be UTF-8: Swift would silently turn other bytes into U+FFFD, and
/// that replacement character would then be stored as if the user had typed it.
public enum ArgumentEncoding {
    /// An argument that is not valid UTF-8.
    public struct Invalid: Error, CustomStringConvertible {
        /// Which argument (1 for the first after the program's name).
        public let position: Int
        /// One sentence.
        public var description: String {
            "argument \(position) is not valid UTF-8; set a UTF-8 locale or convert it (e.g. with iconv) and try again"
        }
    }

    /// Throws ``Invalid`` for the first argument of this process that is not valid UTF-8.
    public static func refuseInvalidUTF8() throws {
        for index in 1..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[index] else { continue }
            if String(validatingCString: argument) == nil { throw Invalid(position: index) }
        }
    }
}
