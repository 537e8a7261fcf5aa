import Foundation
import HeraldCore
import HeraldStore
import Hummingbird
import Logging

/// `/admin/v1/users`: console users, their instance role and their roles per app. The
/// admin API's (an admin token, an admin key, or an instance admin's session).
struct UserRoutes {
    let store: APIStore
    let auth: Authentication
    let body: JSONBody
    let logger = Logger(label: "herald.api.people")

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/admin/v1/users", access: .admin, use: list)
        routes.on(.post, "/admin/v1/users", access: .admin, use: create)
        routes.on(.get, "/admin/v1/users/{email}", access: .admin, use: show)
        routes.on(.patch, "/admin/v1/users/{email}", access: .admin, use: update)
        routes.on(.delete, "/admin/v1/users/{email}", access: .admin, confirm: true, use: delete)
        routes.on(.put, "/admin/v1/users/{email}/apps/{app_key}", access: .admin, use: setRole)
        routes.on(.delete, "/admin/v1/users/{email}/apps/{app_key}", access: .admin, use: removeRole)
    }

    @Sendable func list(_ request: Request, context: HeraldRequestContext) async throws -> UserList {
        try await auth.requireAdmin(request)
        return UserList(users: try await store.people.users().map(PersonBody.init))
    }

    @Sendable func create(_ request: Request, context: HeraldRequestContext) async throws -> EditedResponse<PersonBody> {
        try await auth.requireAdmin(request)
        let input = try await body.decode(UserRequest.self, from: request)
        let spec = try await input.validatedNew()
        var person = try await store.people.createUser(spec)
        if input.disabled == true, let disabled = try await store.people.updateUser(id: person.id, disabled: true) { person = disabled }
        logger.info("user created", metadata: ["herald.user": "\(person.email)"])
        return EditedResponse(status: .created, response: PersonBody(person))
    }

    @Sendable func show(_ request: Request, context: HeraldRequestContext) async throws -> PersonBody {
        try await auth.requireAdmin(request)
        return PersonBody(try await user(context))
    }

    /// `{"name"?, "password"?, "instance_role"?, "disabled"?}`: a new password or
    /// disabling signs the user out everywhere.
    @Sendable func update(_ request: Request, context: HeraldRequestContext) async throws -> PersonBody {
        try await auth.requireAdmin(request)
        let person = try await user(context)
        let input = try await body.decode(UserRequest.self, from: request)
        guard input.email == nil else { throw HeraldError.invalidField("email", "cannot be changed; create another user") }
        let password = try await input.passwordHash()
        let updated = try await store.people.updateUser(
            id: person.id,
            name: try input.validatedName(),
            passwordHash: password,
            instanceRole: input.instanceRoleGiven ? .some(try input.validatedRole()) : nil,
            disabled: input.disabled
        )
        guard let updated else { throw Self.notFound(person.email) }
        return PersonBody(updated)
    }

    @Sendable func delete(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        try await auth.requireAdmin(request)
        let person = try await user(context)
        guard try await store.people.deleteUser(id: person.id) else { throw Self.notFound(person.email) }
        return Response(status: .noContent)
    }

    /// `{"role": "viewer" | "author" | "operator" | "admin"}` on the app.
    @Sendable func setRole(_ request: Request, context: HeraldRequestContext) async throws -> PersonBody {
        try await auth.requireAdmin(request)
        let person = try await user(context)
        let app = try await AdminRoutes.app(context, in: store)
        let input = try await body.decode(RoleBody.self, from: request)
        guard let role = Role(rawValue: input.role) else {
            throw HeraldError.invalidField("role", "must be one of \(Role.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard try await store.people.setRole(role, userID: person.id, appID: app.id) else { throw Self.notFound(person.email) }
        return PersonBody(try await user(context))
    }

    @Sendable func removeRole(_ request: Request, context: HeraldRequestContext) async throws -> PersonBody {
        try await auth.requireAdmin(request)
        let person = try await user(context)
        let app = try await AdminRoutes.app(context, in: store)
        guard try await store.people.setRole(nil, userID: person.id, appID: app.id) else { throw Self.notFound(person.email) }
        return PersonBody(try await user(context))
    }

    private func user(_ context: HeraldRequestContext) async throws -> Person {
        let email = try context.parameter("email")
        guard let person = try await store.people.user(email: email) else { throw Self.notFound(email) }
        return person
    }

    static func notFound(_ email: String) -> HeraldError {
        HeraldError(.userNotFound, "email: no user \(email.prefix(254))")
    }
}

/// `{"email", "name"?, "password"?, "instance_role"?, "disabled"?}`.
struct UserRequest: Decodable {
    var email: String?
    var name: String?
    var password: String?
    var instanceRole: String?
    var instanceRoleGiven = false
    var disabled: Bool?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case email, name, password, disabled
        case instanceRole = "instance_role"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        email = try container.decodeIfGiven(String.self, forKey: .email)
        name = try container.decodeIfGiven(String.self, forKey: .name)
        password = try container.decodeIfGiven(String.self, forKey: .password)
        instanceRoleGiven = container.contains(.instanceRole)
        // null: no instance role (on a change: take it away).
        instanceRole = try container.decodeIfPresent(String.self, forKey: .instanceRole)
        disabled = try container.decodeIfGiven(Bool.self, forKey: .disabled)
    }

    static let maxEmailBytes = 254
    static let maxNameBytes = 100
    static let maxPasswordBytes = 1024

    /// A new user: an email, and a password unless they sign in through OpenID Connect.
    func validatedNew() async throws -> PersonSpec {
        guard let email else { throw HeraldError.missingField("email") }
        try Self.checkEmail(email)
        return PersonSpec(
            email: email,
            name: try validatedName() ?? "",
            passwordHash: try await passwordHash(),
            instanceRole: try validatedRole()
        )
    }

    static func checkEmail(_ email: String) throws(HeraldError) {
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard email.utf8.count <= maxEmailBytes, parts.count == 2, !parts[0].isEmpty, parts[1].contains("."),
            !email.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control })
        else {
            throw .invalidField("email", "an address like ops@example.com, at most \(maxEmailBytes) bytes")
        }
    }

    func validatedName() throws(HeraldError) -> String? {
        guard let name else { return nil }
        guard name.utf8.count <= Self.maxNameBytes, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalidField("name", "at most \(Self.maxNameBytes) bytes, no control characters")
        }
        return name
    }

    func validatedRole() throws(HeraldError) -> Role? {
        guard let instanceRole else { return nil }
        guard let role = Role(rawValue: instanceRole) else {
            throw .invalidField("instance_role", "must be one of \(Role.allCases.map(\.rawValue).joined(separator: ", ")), or null")
        }
        return role
    }

    /// The given password's hash (computed off the event loops), nil when none is given.
    func passwordHash() async throws -> String? {
        guard let password else { return nil }
        guard (PasswordHash.minimumLength...Self.maxPasswordBytes).contains(password.utf8.count) else {
            throw HeraldError.invalidField("password", "\(PasswordHash.minimumLength) to \(Self.maxPasswordBytes) bytes")
        }
        return try await PasswordHashing.hash(password)
    }
}

/// `{"role"}`.
struct RoleBody: Decodable {
    var role: String

    enum CodingKeys: String, CodingKey, CaseIterable { case role }

    init(from decoder: any Decoder) throws {
        role = try decoder.strictContainer(keyedBy: CodingKeys.self).decode(String.self, forKey: .role)
    }
}

struct UserList: ResponseEncodable {
    var users: [PersonBody]
}
