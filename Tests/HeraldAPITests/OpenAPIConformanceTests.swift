import Foundation
import HeraldAPI
import HeraldCore
import HeraldStore
import HeraldTestSupport
import PostgresNIO
import Prometheus
import Testing

/// `openapi.yaml` and the server describe the same API.
@Suite struct OpenAPIConformanceTests {
    /// (METHOD, path) pairs under `paths:` in the embedded `openapi.yaml`.
    static func specifiedRoutes() -> Set<String> {
        var routes = Set<String>()
        var inPaths = false
        var currentPath: String?
        for line in EmbeddedDocuments.openAPI.split(separator: "\n", omittingEmptySubsequences: false) {
            if !line.hasPrefix(" "), !line.isEmpty {
                inPaths = line.hasPrefix("paths:")
                continue
            }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), !line.hasPrefix("   ") {
                currentPath = String(line.dropFirst(2).dropLast())
            } else if line.hasPrefix("    "), !line.hasPrefix("     "), let currentPath {
                let key = line.dropFirst(4).split(separator: ":").first.map(String.init) ?? ""
                if ["get", "put", "post", "delete", "patch", "head", "options"].contains(key) {
                    routes.insert("\(key.uppercased()) \(currentPath)")
                }
            }
        }
        return routes
    }

    /// Each operation's `security` names, by "METHOD path" (empty: open).
    static func specifiedSecurity() -> [String: Set<String>] {
        var security: [String: Set<String>] = [:]
        var inPaths = false
        var currentPath: String?
        var operation: String?
        var inSecurity = false
        for line in EmbeddedDocuments.openAPI.split(separator: "\n", omittingEmptySubsequences: false) {
            if !line.hasPrefix(" "), !line.isEmpty {
                inPaths = line.hasPrefix("paths:")
                continue
            }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), !line.hasPrefix("   ") {
                currentPath = String(line.dropFirst(2).dropLast())
                operation = nil
            } else if line.hasPrefix("    "), !line.hasPrefix("     "), let currentPath {
                let key = line.dropFirst(4).split(separator: ":").first.map(String.init) ?? ""
                operation = ["get", "put", "post", "delete", "patch"].contains(key) ? "\(key.uppercased()) \(currentPath)" : nil
                if let operation { security[operation] = [] }
            } else if operation != nil, line.hasPrefix("      "), !line.hasPrefix("       ") {
                inSecurity = line.hasPrefix("      security:")
            } else if inSecurity, let operation, line.hasPrefix("        - ") {
                let name = line.dropFirst(10).split(separator: ":").first.map(String.init) ?? ""
                security[operation, default: []].insert(name)
            }
        }
        return security
    }

    /// What openapi.yaml says of each route's credentials is what the route declares
    /// (``RouteAccess``): admin routes the admin token, app routes the app's Basic
    /// credentials (its keys too), device routes the device's as well, open routes none.
    @Test func everyRoutesSecurityIsTheAccessItDeclares() throws {
        let url = try DatabaseURL("postgres://unused@127.0.0.1:1/unused")
        let (stores, _) = TestDatabase.makeStores(url, maximumConnections: 1)
        let (_, table) = buildRouter(configuration: APIConfiguration(adminToken: "x"), store: stores.api, registry: PrometheusCollectorRegistry())
        let specified = Self.specifiedSecurity()
        // The console's pages are HTML for browsers, not the API.
        for route in table.routes where route.access != .console && !route.path.hasPrefix("/console/") {
            let name = "\(route.method.rawValue) \(route.path)"
            let security = specified[name] ?? ["(not specified)"]
            switch route.access {
            // Open: none, or none as one choice (`{}`: a registration may prove it holds one).
            case .open: #expect(security.isEmpty || security.contains("{}"), "\(name): \(security)")
            case .admin: #expect(security == ["adminToken"], "\(name): \(security)")
            case .app: #expect(security.contains("appBasic") && !security.contains("deviceBasic"), "\(name): \(security)")
            case .appOrDevice: #expect(security.isSuperset(of: ["appBasic", "deviceBasic"]), "\(name): \(security)")
            case .person: #expect(security == ["sessionBearer"], "\(name): \(security)")
            // Email and password, or none (the OpenID Connect flow's own).
            case .signIn: #expect(security == ["signInBasic"] || security.isEmpty, "\(name): \(security)")
            case .console: break
            }
        }
    }

    @Test func everyRouteIsSpecifiedAndEverySpecifiedRouteExists() throws {
        let url = try DatabaseURL("postgres://unused@127.0.0.1:1/unused")
        let (stores, _) = TestDatabase.makeStores(url, maximumConnections: 1)
        let (_, table) = buildRouter(configuration: APIConfiguration(adminToken: "x"), store: stores.api, registry: PrometheusCollectorRegistry())
        let implemented = Set(table.routes.filter { !$0.path.hasPrefix("/console") }.map { "\($0.method.rawValue) \($0.path)" })
        let specified = Self.specifiedRoutes()
        #expect(specified.count > 10)
        #expect(implemented.subtracting(specified).sorted() == [], "implemented but not in openapi.yaml")
        #expect(specified.subtracting(implemented).sorted() == [], "in openapi.yaml but not implemented")
    }

    /// The names of the spec's `TimeZoneName` enum.
    static func specifiedTimeZones() -> [String] {
        let spec = EmbeddedDocuments.openAPI
        guard let schema = spec.range(of: "\n    TimeZoneName:\n"),
            let open = spec[schema.upperBound...].range(of: "enum:\n        ["),
            let close = spec[open.upperBound...].firstIndex(of: "]")
        else { return [] }
        return spec[open.upperBound..<close].split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    /// Every zone the spec names is one the server takes, so a request the spec allows
    /// is never refused for its time zone.
    @Test func everyTimeZoneTheSpecNamesIsTakenByTheServer() throws {
        let zones = Self.specifiedTimeZones()
        #expect(zones.count > 300)
        #expect(zones.contains("UTC") && zones.contains("Asia/Shanghai"))
        for zone in zones {
            #expect(throws: Never.self, "\(zone)") { _ = try Validation.timeZone(zone, field: "time_zone") }
        }
    }

    @Test func theSpecListsEveryErrorCode() {
        // The Error schema's table rows, by their first three cells: the number, the status
        // and the name. (Read once: a `contains` per code took seconds of the two threads
        // every test shares.)
        var rows = Set<String>()
        for line in EmbeddedDocuments.openAPI.split(separator: "\n") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            if cells.count > 4, cells[0].isEmpty { rows.insert(cells[1...3].joined(separator: "|")) }
        }
        for code in HeraldError.Code.allCases {
            let row = "\(code.rawValue)|\(code.httpStatus)|\(code.name)"
            #expect(rows.contains(row), "no row | \(code.rawValue) | \(code.httpStatus) | \(code.name) |")
        }
    }
}
