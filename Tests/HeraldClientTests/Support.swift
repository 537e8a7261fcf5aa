import HeraldMQTT
import HeraldStore
import HeraldTestSupport
import NIOCore
import NIOPosix
import PostgresNIO

enum PostgresClientForTests {
    static func make(_ url: DatabaseURL) -> PostgresClient {
        PostgresClient(configuration: url.clientConfiguration(maximumConnections: 4), backgroundLogger: TestDatabase.logger)
    }
}
