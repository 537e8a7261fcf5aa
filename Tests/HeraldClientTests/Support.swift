import HeraldMQTT
import HeraldStore
import HeraldTestSupport
import NIOCore
import NIOPosix
import PostgresNIO

enum PostgresClientForTests {
    static func make(_ url: DatabaseURL) -> PostgresClient {
        TestDatabase.client(url, maximumConnections: 4)
    }
}
