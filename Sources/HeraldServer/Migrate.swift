import ArgumentParser
import Foundation
import HeraldStore
import Logging

/// `herald migrate`: brings the database schema up to date and exits.
struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply database migrations and exit.")

    @OptionGroup var options: ConfigOptions

    func run() async throws {
        try await reportingStartupErrors {
            let configuration = try HeraldConfiguration(reader: try await options.reader(environment: ProcessInfo.processInfo.environment))
            let logger = LogSetup.bootstrap(level: configuration.logLevel)
            let dataDirectory = try DataDirectory(path: configuration.dataDirectory)
            let database = try await DatabaseSetup.prepare(configuration, dataDirectory: dataDirectory, logger: logger)
            await database.stop(logger: logger)
            print("Database \(database.url) is up to date (\(Migration.embedded.count) migrations).")
        }
    }
}

/// Runs `body`, printing a failure as one `herald: error: ...` line and exiting 1.
func reportingStartupErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as ExitCode {
        throw error
    } catch {
        FileHandle.standardError.write(Data("herald: error: \(error)\n".utf8))
        throw ExitCode.failure
    }
}
