/// Helpers for SQL text that parameters cannot express.
public enum SQLIdentifier {
    /// `name` as a quoted identifier: `people` → `"people"`, `we"ird` → `"we""ird"`.
    ///
    /// Table and column names cannot be statement parameters; quote them with this whenever
    /// they are not literals in your source code.
    public static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// A dotted name with each part quoted: `public.people` → `"public"."people"`.
    public static func quoted(qualified name: String) -> String {
        name.split(separator: ".", omittingEmptySubsequences: false).map { quoted(String($0)) }.joined(separator: ".")
    }
}
