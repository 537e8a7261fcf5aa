import Logging
import Metrics
import Prometheus
import Synchronization

enum LogSetup {
    private static let bootstrapped = Mutex(false)

    /// Sets up swift-log once per process and returns the server's logger.
    static func bootstrap(level: Logger.Level) -> Logger {
        let first = bootstrapped.withLock { done in
            defer { done = true }
            return !done
        }
        if first {
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
        }
        var logger = Logger(label: "herald")
        logger.logLevel = level
        return logger
    }
}

enum Telemetry {
    /// Routes swift-metrics to a Prometheus registry, served at `/metrics`.
    static func bootstrap() -> PrometheusCollectorRegistry {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return registry
    }
}
