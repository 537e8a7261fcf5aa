import Foundation
import PackagePlugin

/// Embeds repository files into targets as Swift string literals, so every build of
/// `herald` carries exactly the schema and the API description in the repository:
/// `migrations/*.sql` into HeraldStore, `openapi.yaml` into HeraldAPI.
@main
struct EmbedMigrations: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let root = context.package.directoryURL
        let mode: String
        let files: [URL]
        switch target.name {
        case "HeraldStore":
            mode = "migrations"
            files = try FileManager.default.contentsOfDirectory(at: root.appending(path: "migrations"), includingPropertiesForKeys: nil)
                .filter { $0.pathExtension == "sql" }
                .sorted { $0.lastPathComponent < $1.lastPathComponent }
        case "HeraldAPI":
            mode = "openapi"
            files = [root.appending(path: "openapi.yaml")]
        default:
            return []
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "Embedded+\(mode).swift")
        return [
            .buildCommand(
                displayName: "Embedding \(mode) into \(target.name)",
                executable: try context.tool(named: "herald-embed").url,
                arguments: [mode, output.path()] + files.map { $0.path() },
                inputFiles: files,
                outputFiles: [output]
            )
        ]
    }
}
