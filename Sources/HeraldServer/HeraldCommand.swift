import ArgumentParser

/// `herald`: the Herald server.
@main
struct HeraldCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Herald, a self-hosted push platform.",
        subcommands: [Serve.self, Migrate.self],
        defaultSubcommand: Serve.self
    )
}
