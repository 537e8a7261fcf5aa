/// The exit statuses of heraldctl, from sysexits(3) where one fits.
enum ExitStatus {
    /// The server answered with an error (`error <code>: <message>`).
    static let apiError: Int32 = 1
    /// A flag or argument is wrong (ArgumentParser's own validation failures use it too).
    static let usage: Int32 = 64
    /// The server could not be reached: refused, unknown host, no answer in time.
    static let unavailable: Int32 = 69
    /// `--wait` or `--watch` gave up before the message settled.
    static let timedOut: Int32 = 75
    /// The server answered with something that is not Herald's API.
    static let protocolError: Int32 = 76
    /// The config file, a profile or a credential is missing or invalid.
    static let configuration: Int32 = 78
}

/// A failure heraldctl reports on stderr before it exits with `exitStatus`.
///
/// Messages never carry secrets: URLs are shown without their user information, and
/// credentials are named, never quoted.
struct CLIError: Error, CustomStringConvertible {
    private enum Kind {
        case api(status: Int, code: Int, message: String)
        case unexpectedResponse(status: Int, url: String)
        case unreachable(service: String, url: String, reason: String)
        case configuration(String)
        case usage(String)
        case timedOut(String)
        case failed(String)
    }

    private let kind: Kind

    private init(_ kind: Kind) { self.kind = kind }

    /// An error answer of the API, `{"error": {"code": ..., "message": ...}}`.
    static func api(status: Int, code: Int, message: String) -> CLIError {
        CLIError(.api(status: status, code: code, message: message))
    }

    /// An answer that is neither a success nor one of Herald's error bodies.
    static func unexpectedResponse(status: Int, url: String) -> CLIError {
        CLIError(.unexpectedResponse(status: status, url: url))
    }

    /// No answer at all from `url`, Herald's API unless `service` says which.
    static func unreachable(_ service: String = "Herald", url: String, reason: String) -> CLIError {
        CLIError(.unreachable(service: service, url: url, reason: reason))
    }

    /// A problem with the config file, a profile or missing credentials.
    static func configuration(_ message: String) -> CLIError { CLIError(.configuration(message)) }

    /// A flag or argument that only shows up as wrong once the command runs.
    static func usage(_ message: String) -> CLIError { CLIError(.usage(message)) }

    /// Watching delivery took longer than allowed.
    static func timedOut(_ message: String) -> CLIError { CLIError(.timedOut(message)) }

    /// The request succeeded but its answer means the command failed.
    static func failed(_ message: String) -> CLIError { CLIError(.failed(message)) }

    /// The API's error code, for an error answer.
    var apiCode: Int? {
        if case .api(_, let code, _) = kind { return code }
        return nil
    }

    var exitStatus: Int32 {
        switch kind {
        case .api: ExitStatus.apiError
        case .unexpectedResponse: ExitStatus.protocolError
        case .unreachable: ExitStatus.unavailable
        case .configuration: ExitStatus.configuration
        case .usage: ExitStatus.usage
        case .timedOut: ExitStatus.timedOut
        case .failed: ExitStatus.apiError
        }
    }

    var description: String {
        switch kind {
        case .api(_, let code, let message):
            "error \(code): \(message)"
        case .unexpectedResponse(let status, let url):
            "error: \(url) answered HTTP \(status) without a Herald error body; is this Herald's API?"
        case .unreachable(let service, let url, let reason):
            "error: cannot reach \(service) at \(url): \(reason)"
        case .configuration(let message), .usage(let message), .timedOut(let message), .failed(let message):
            "error: \(message)"
        }
    }
}
