import ArgumentParser
import Foundation

/// `heraldctl users`: console users and their roles (admin API: the admin token, an admin
/// key, or an instance admin's session).
struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract: "Create and manage console users and their roles (docs/security.md).",
        discussion: """
            Roles, on one app or (--instance-role) on every app: viewer reads; author \
            composes pushes that wait for another person's approval; operator sends, \
            recalls, schedules; admin also changes settings, keys and people.
            A password is read from standard input with --password-stdin; without it, one \
            is generated and printed once.
            Examples:
              heraldctl users create ops@example.com --instance-role admin
              echo "$PASSWORD" | heraldctl users create dev@example.com --password-stdin
              heraldctl users role dev@example.com --app 8103a4c628a0b98974ec1949 operator
              heraldctl users role dev@example.com --app 8103a4c628a0b98974ec1949 none
              heraldctl users disable dev@example.com
              heraldctl users list
            """,
        subcommands: [Create.self, List.self, Role.self, Disable.self, Enable.self, Password.self, Delete.self]
    )

    static let roles = ["viewer", "author", "operator", "admin"]

    /// A password from standard input (its first line), or a generated one.
    struct PasswordSource: ParsableArguments {
        @Flag(help: "Read the password from standard input (else one is generated and printed once).") var passwordStdin = false

        func password() throws -> (text: String, generated: Bool) {
            guard passwordStdin else {
                var generator = SystemRandomNumberGenerator()
                let alphabet = Array("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
                let text = String((0..<20).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
                return (text, true)
            }
            guard let line = readLine(strippingNewline: true), !line.isEmpty else {
                throw ValidationError("--password-stdin: no password on standard input")
            }
            return (line, false)
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a user.")

        @Argument(help: "Their email: how they sign in.") var email: String
        @Option(help: "Their name.") var name: String?
        @Option(help: ArgumentHelp("Their role on every app: viewer, author, operator or admin.", valueName: "role")) var instanceRole: String?
        @Flag(help: "No password: they sign in through OpenID Connect only.") var oidcOnly = false
        @OptionGroup var password: PasswordSource

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            struct Body: Encodable {
                var email: String
                var name: String?
                var password: String?
                var instanceRole: String?
                enum CodingKeys: String, CodingKey {
                    case email, name, password
                    case instanceRole = "instance_role"
                }
            }
            if let instanceRole, !UsersCommand.roles.contains(instanceRole) {
                throw ValidationError("--instance-role: one of \(UsersCommand.roles.joined(separator: ", "))")
            }
            let secret = oidcOnly ? nil : try password.password()
            let client = try connection.client()
            let response = try await client.send(
                "POST",
                "/admin/v1/users",
                json: Body(email: email, name: name, password: secret?.text, instanceRole: instanceRole),
                .admin
            )
            try output.emit(response) { () throws(CLIError) in
                let user = try response.decode(UserModel.self, url: client.connection.displayURL)
                var text = user.summary
                if let secret, secret.generated { text += "\npassword  \(secret.text) (shown only once)" }
                return text
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the users and their roles.")

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try connection.client()
            let response = try await client.get("/admin/v1/users", .admin)
            try output.emit(response) { () throws(CLIError) in
                let list = try response.decode(UserList.self, url: client.connection.displayURL)
                var table = TableRenderer(["EMAIL", "NAME", "INSTANCE", "APPS", "SIGN_IN", "STATE"])
                for user in list.users {
                    table.append([
                        user.email, user.name, user.instanceRole ?? "-", user.appsText, user.signIn, user.disabled ? "disabled" : "active",
                    ])
                }
                return table.render()
            }
        }
    }

    struct Role: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Give a user a role on an app, or take it away (none).")

        @Argument(help: "Their email.") var email: String
        @Option(help: ArgumentHelp("The app's key.", valueName: "app_key")) var app: String
        @Argument(help: "viewer, author, operator, admin, or none.") var role: String

        @OptionGroup(title: "Connection") var connection: ConnectionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            struct Body: Encodable { var role: String }
            guard role == "none" || UsersCommand.roles.contains(role) else {
                throw ValidationError("role: one of \(UsersCommand.roles.joined(separator: ", ")), or none")
            }
            let client = try connection.client()
            let path = "/admin/v1/users/\(APIClient.segment(email))/apps/\(APIClient.segment(app))"
            let response =
                role == "none"
                ? try await client.delete(path, .admin)
                : try await client.send("PUT", path, json: Body(role: role), .admin)
            try output.emit(response) { () throws(CLIError) in
                try response.decode(UserModel.self, url: client.connection.displayURL).summary
            }
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable a user: their sessions end at once.")

        @Argument(help: "Their email.") var email: String
        @OptionGroup(title: "Connection") var connection: ConnectionOptions

        func run() async throws {
            try await UsersCommand.patch(email, ["disabled": true], connection)
            Terminal.print("disabled \(email); their sessions ended")
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a disabled user again.")

        @Argument(help: "Their email.") var email: String
        @OptionGroup(title: "Connection") var connection: ConnectionOptions

        func run() async throws {
            try await UsersCommand.patch(email, ["disabled": false], connection)
            Terminal.print("enabled \(email)")
        }
    }

    struct Password: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set a user's password: their sessions end at once.")

        @Argument(help: "Their email.") var email: String
        @OptionGroup var password: PasswordSource
        @OptionGroup(title: "Connection") var connection: ConnectionOptions

        func run() async throws {
            let secret = try password.password()
            struct Body: Encodable { var password: String }
            let client = try connection.client()
            _ = try await client.send("PATCH", "/admin/v1/users/\(APIClient.segment(email))", json: Body(password: secret.text), .admin)
            Terminal.print(
                "password set for \(email); their sessions ended" + (secret.generated ? "\npassword  \(secret.text) (shown only once)" : "")
            )
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a user (one who composed or approved pushes is disabled instead).")

        @Argument(help: "Their email.") var email: String
        @OptionGroup(title: "Connection") var connection: ConnectionOptions

        func run() async throws {
            let client = try connection.client()
            _ = try await client.delete("/admin/v1/users/\(APIClient.segment(email))", .admin)
            Terminal.print("deleted \(email)")
        }
    }

    static func patch(_ email: String, _ body: [String: Bool], _ connection: ConnectionOptions) async throws {
        let client = try connection.client()
        _ = try await client.send("PATCH", "/admin/v1/users/\(APIClient.segment(email))", json: body, .admin)
    }
}

/// A user as the API answers it.
struct UserModel: Decodable {
    var email: String
    var name: String
    var instanceRole: String?
    var appRoles: [String: String]
    var hasPassword: Bool
    var oidc: Bool
    var disabled: Bool

    enum CodingKeys: String, CodingKey {
        case email, name, oidc, disabled
        case instanceRole = "instance_role"
        case appRoles = "app_roles"
        case hasPassword = "has_password"
    }

    var appsText: String {
        appRoles.isEmpty ? "-" : appRoles.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
    }

    var signIn: String { [hasPassword ? "password" : nil, oidc ? "oidc" : nil].compactMap { $0 }.joined(separator: ",") }

    var summary: String {
        """
        email     \(email)
        instance  \(instanceRole ?? "-")
        apps      \(appsText)
        sign-in   \(signIn.isEmpty ? "oidc (not yet bound)" : signIn)
        state     \(disabled ? "disabled" : "active")
        """
    }
}

struct UserList: Decodable {
    var users: [UserModel]
}
