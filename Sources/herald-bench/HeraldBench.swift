import ArgumentParser

/// `herald-bench`: Herald's benchmarks, with the peer measured in the same run.
@main
struct HeraldBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald-bench",
        abstract: "Benchmarks of Herald: its gateway against mosquitto, and pushes end to end.",
        subcommands: [GatewayBenchCommand.self, PushBenchCommand.self, APNsFanOutCommand.self, LoadCommand.self],
        defaultSubcommand: GatewayBenchCommand.self
    )
}
