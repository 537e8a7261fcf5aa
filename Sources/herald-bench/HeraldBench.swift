import ArgumentParser

/// `herald-bench`: Herald's benchmarks, with the peer measured in the same run.
@main
struct HeraldBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald-bench",
        abstract: "Benchmarks of Herald's gateway against mosquitto.",
        subcommands: [GatewayBenchCommand.self, LoadCommand.self],
        defaultSubcommand: GatewayBenchCommand.self
    )
}
