import ArgumentParser

/// `heraldctl recall`: withdraw pushes not yet delivered, and what devices already show.
struct RecallCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recall",
        abstract: "Recall pushes by message id, or by the --identifier they were sent with.",
        discussion: """
            Examples:
              heraldctl recall 1a2b3c4d5e
              heraldctl recall --identifier order-42-shipped
            """
    )

    @Argument(help: ArgumentHelp("The message ids to recall.", valueName: "msg-id")) var messageIDs: [String] = []
    @Option(name: .customLong("identifier"), help: ArgumentHelp("Recall the pushes sent with this identifier (repeatable).", valueName: "id"))
    var identifiers: [String] = []

    @OptionGroup(title: "Connection") var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if messageIDs.isEmpty, identifiers.isEmpty { throw ValidationError("Name the message ids to recall, or give --identifier.") }
        if !messageIDs.isEmpty, !identifiers.isEmpty { throw ValidationError("Give message ids or --identifier, not both.") }
    }

    func run() async throws {
        let client = try connection.client()
        var recalled: [String] = []
        if identifiers.isEmpty {
            for messageID in messageIDs {
                let response = try await client.delete("/v3/push/\(APIClient.segment(messageID))", .app)
                recalled += try show(response, client)
            }
        } else {
            let response = try await client.send("POST", "/v3/push/recall", json: ["identifiers": identifiers], .app)
            recalled += try show(response, client)
        }
        if !output.json, recalled.isEmpty { Terminal.print("nothing was recalled") }
    }

    /// Prints one answer (its JSON with `--json`) and returns the message ids it recalled.
    private func show(_ response: APIClient.Response, _ client: APIClient) throws(CLIError) -> [String] {
        let answer = try response.decode(Recalled.self, url: client.connection.displayURL)
        try output.emit(response) { answer.recalled.map { "recalled \($0)" }.joined(separator: "\n") }
        return answer.recalled
    }
}
