import ArgumentParser
import Foundation
import HeraldFCMSandbox

/// `fcm-sandbox`: a conformant FCM server (Google's token endpoint and FCM's HTTP v1
/// send) for local runs, benchmarks and the checks other implementations make of it.
@main
struct FCMSandboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fcm-sandbox",
        abstract: "Runs a conformant FCM server (HTTP/2 over TLS with a self-signed certificate).",
        discussion: """
            POST /token (the assertion checked: RS256, kid, audience, scope, an hour at most),
            POST /v1/projects/{project}/messages:send, GET /sandbox/stats, GET /sandbox/assertions.
            It writes a service account's key file for --project whose token_uri is its own /token,
            admitted, for a client to use as it is.
            """
    )

    @Option(help: "Port on 127.0.0.1 (0 picks a free one).") var port = 0
    @Option(help: "The Firebase project of the key file it writes.") var project = "herald-sandbox"
    @Option(help: "Where to write the key file.") var keyFileOut: String
    @Option(help: "Where to write its self-signed certificate PEM.") var certificateOut: String
    @Flag(help: "Keep no messages, only count them (benchmarks).") var countOnly = false

    func run() async throws {
        let sandbox = try await FCMSandbox.start(port: port, record: !countOnly)
        let (json, account) = try FCMSandbox.keyFile(project: project, tokenURI: sandbox.tokenURL)
        try sandbox.admit(account)
        try json.write(to: URL(fileURLWithPath: keyFileOut))
        try sandbox.certificatePEM.write(toFile: certificateOut, atomically: true, encoding: .utf8)
        // One line for tools that start the sandbox and read where it is; written unbuffered.
        FileHandle.standardOutput.write(Data("fcm-sandbox ready port=\(sandbox.port) url=\(sandbox.baseURL)\n".utf8))
        // Until SIGTERM or SIGINT ends the process.
        while true { try await Task.sleep(for: .seconds(3600)) }
    }
}
