// Turns README.md's ```swift blocks into one Swift file: imports at the top, top-level type
// declarations (a line starting `struct`, `enum`, `extension`… up to a line that is `}`)
// hoisted to file scope, and the rest of each block as the body of its own async function.
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: ReadmeExampleExtractor README.md output.swift\n".utf8))
    exit(2)
}
let readme = try String(contentsOfFile: arguments[1], encoding: .utf8)
let declarationStarts = ["struct ", "enum ", "extension ", "final class ", "class ", "protocol ", "actor "]

var imports = Set<String>()
var declarations: [String] = []
var functions: [String] = []
var block: [String]?
var blockStartLine = 0

for (number, line) in readme.components(separatedBy: "\n").enumerated() {
    if block == nil {
        if line.trimmingCharacters(in: .whitespaces) == "```swift" { block = []; blockStartLine = number + 2 }
        continue
    }
    if line.trimmingCharacters(in: .whitespaces) == "```" {
        var body: [String] = []
        var declaration: [String]?
        for codeLine in block! {
            if var open = declaration {
                open.append(codeLine)
                if codeLine == "}" { declarations.append(open.joined(separator: "\n")); declaration = nil } else { declaration = open }
            } else if codeLine.hasPrefix("import ") {
                imports.insert(codeLine)
            } else if declarationStarts.contains(where: codeLine.hasPrefix)
                        || (codeLine.hasPrefix("@") && declarationStarts.contains { codeLine.contains(" " + $0) }) {
                if codeLine.hasSuffix("}") { declarations.append(codeLine) } else { declaration = [codeLine] }
            } else {
                body.append("    " + codeLine)
            }
        }
        functions.append("// README.md line \(blockStartLine)\nfunc readmeExample\(functions.count + 1)() async throws {\n\(body.joined(separator: "\n"))\n}")
        block = nil
        continue
    }
    block!.append(line)
}

let source = """
    // Generated from README.md by ReadmeExampleExtractor. Do not edit.
    \(imports.sorted().joined(separator: "\n"))

    \(declarations.joined(separator: "\n\n"))

    \(functions.joined(separator: "\n\n"))

    let readmeExampleCount = \(functions.count)
    """
try source.write(toFile: arguments[2], atomically: true, encoding: .utf8)
