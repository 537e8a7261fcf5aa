import Foundation
import PackagePlugin

/// Embeds repository files into targets as Swift string literals, so every build of
/// `herald` carries exactly the schema and the API description in the repository:
/// `migrations/*.sql` into HeraldStore, `openapi.yaml` and the web console's `console/`
/// into HeraldAPI.
@main
struct EmbedMigrations: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let root = context.package.directoryURL
        let mode: String
        // What the tool is given (a directory or a file), and what its command depends on.
        let given: [URL]
        let inputs: [URL]
        var commands: [Command] = []
        switch target.name {
        case "HeraldStore":
            // The tool lists the directory itself, and the directory is an input: a build
            // after a migration is added embeds it even when this plugin's file list from
            // an earlier build is reused.
            mode = "migrations"
            let directory = root.appending(path: "migrations")
            given = [directory]
            inputs =
                [directory]
                + (try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
                    .filter { $0.pathExtension == "sql" })
        case "HeraldAPI":
            mode = "openapi"
            given = [root.appending(path: "openapi.yaml")]
            inputs = given
            // The web console's templates and assets, with their directories (a file added
            // is embedded too).
            let console = root.appending(path: "console")
            var consoleInputs = [console]
            for folder in ["templates", "assets"] {
                let url = console.appending(path: folder)
                consoleInputs.append(url)
                consoleInputs += try FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)
            }
            let output = context.pluginWorkDirectoryURL.appending(path: "Embedded+console.swift")
            commands.append(
                .buildCommand(
                    displayName: "Embedding the console into \(target.name)",
                    executable: try context.tool(named: "herald-embed").url,
                    arguments: ["console", output.path(), console.path()],
                    inputFiles: consoleInputs,
                    outputFiles: [output]
                )
            )
        default:
            return []
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "Embedded+\(mode).swift")
        commands.append(
            .buildCommand(
                displayName: "Embedding \(mode) into \(target.name)",
                executable: try context.tool(named: "herald-embed").url,
                arguments: [mode, output.path()] + given.map { $0.path() },
                inputFiles: inputs,
                outputFiles: [output]
            )
        )
        return commands
    }
}
