import ArgumentParser
import Foundation

/// `heraldctl`: drives Herald's Open API from a terminal.
@main
struct HeraldCtl: AsyncParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "heraldctl",
        abstract: "The admin CLI of Herald: apps, devices, tags, aliases, pushes, schedules and their delivery.",
        discussion: """
            Connection settings come from flags, else the environment (HERALD_URL, HERALD_APP_KEY, \
            HERALD_MASTER_SECRET, HERALD_ADMIN_TOKEN), else a profile of the config file \
            (~/.config/herald/heraldctl.json; --profile or HERALD_PROFILE picks one). \
            Secrets are never printed: `heraldctl config show` says where each setting comes from.

            Output is an aligned table; --json prints the API's JSON for scripts. API errors are \
            printed to stderr as `error <code>: <message>`.

            Exit status: 0 success, 1 the API answered with an error, 64 bad usage, 69 the server \
            could not be reached, 75 --wait/--watch timed out, 76 the answer was not Herald's API, \
            78 a missing credential or a bad config file.

            Shell completion: heraldctl --generate-completion-script bash|zsh|fish
            """,
        version: version,
        subcommands: [
            AppsCommand.self,
            DevicesCommand.self,
            TagsCommand.self,
            AliasesCommand.self,
            PushCommand.self,
            SchedulesCommand.self,
            CategoriesCommand.self,
            RecallCommand.self,
            StatusCommand.self,
            ReportCommand.self,
            EventsCommand.self,
            WebhooksCommand.self,
            KeysCommand.self,
            UsersCommand.self,
            AuditCommand.self,
            ConfigCommand.self,
            APNsToolCommand.self,
            FCMToolCommand.self,
            DoctorCommand.self,
        ]
    )

    /// Runs the command; `CLIError`s are printed in heraldctl's own format with their exit
    /// status, anything else (usage, help, completion scripts) as ArgumentParser does.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let error as CLIError {
            Terminal.warn(error.description)
            Self.exit(withError: ExitCode(error.exitStatus))
        } catch {
            Self.exit(withError: error)
        }
    }
}
