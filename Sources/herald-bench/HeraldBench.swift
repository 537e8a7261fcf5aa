import ArgumentParser

/// `herald-bench`: Herald's benchmarks, with the peer measured in the same run.
@main
struct HeraldBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald-bench",
        abstract: "Benchmarks of Herald: its gateway against mosquitto, pushes end to end, a cluster against one node, a device import.",
        subcommands: [
            GatewayBenchCommand.self, PushBenchCommand.self, APNsFanOutCommand.self, ClusterBenchCommand.self, IdleBenchCommand.self,
            LoadCommand.self,
            ImportBenchCommand.self,
        ],
        defaultSubcommand: GatewayBenchCommand.self
    )
}
