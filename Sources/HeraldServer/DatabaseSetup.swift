import HeraldStore
import Logging

/// The database Herald runs on: the configured URL, or the embedded cluster.
struct DatabaseSetup {
    let url: DatabaseURL
    let embedded: EmbeddedPostgres?

    /// Starts the embedded cluster when no URL is configured, checks the database is
    /// usable (a clear error within seconds otherwise), and migrates it.
    static func prepare(_ configuration: HeraldConfiguration, dataDirectory: DataDirectory, logger: Logger) async throws -> DatabaseSetup {
        let setup: DatabaseSetup
        if let configured = configuration.database.url {
            do {
                setup = DatabaseSetup(url: try DatabaseURL(configured), embedded: nil)
            } catch {
                throw StartupError("HERALD_DATABASE_URL: \(error)")
            }
        } else {
            let embedded = try await EmbeddedPostgres.start(
                .init(directory: dataDirectory.postgresDirectory, binDirectory: configuration.database.postgresBinDirectory),
                logger: logger
            )
            setup = DatabaseSetup(url: embedded.url, embedded: embedded)
        }
        do {
            _ = try await DatabaseProbe.withConnection(to: setup.url, logger: logger) { connection in
                try await Migrator().migrate(on: connection, logger: logger)
            }
        } catch {
            await setup.stop(logger: logger)
            throw error
        }
        return setup
    }

    func stop(logger: Logger) async {
        await embedded?.stop(logger: logger)
    }
}
