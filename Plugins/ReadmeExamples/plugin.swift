import Foundation
import PackagePlugin

/// Compiles every ```swift block of README.md into the target it is applied to, so a README
/// example that stops compiling fails the build.
@main
struct ReadmeExamples: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let readme = context.package.directoryURL.appending(path: "README.md")
        let output = context.pluginWorkDirectoryURL.appending(path: "ReadmeExamples.swift")
        return [
            .buildCommand(
                displayName: "Extracting README.md examples",
                executable: try context.tool(named: "ReadmeExampleExtractor").url,
                arguments: [readme.path, output.path],
                inputFiles: [readme],
                outputFiles: [output]),
        ]
    }
}
