import ArgumentParser
import Foundation

/// How results are printed: aligned tables for people, the API's JSON for scripts.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print the API's JSON answer instead of a table (nothing for answers without a body).")
    var json = false

    /// Prints the answer: its JSON body with `--json`, else what `human` renders from it.
    func emit(_ response: APIClient.Response, human: () throws(CLIError) -> String) throws(CLIError) {
        if json {
            if !response.body.isEmpty { Terminal.printRaw(response.body) }
        } else {
            let text = try human()
            if !text.isEmpty { Terminal.print(text) }
        }
    }
}

extension ConnectionOptions {
    /// A client for the resolved connection.
    func client() throws(CLIError) -> APIClient {
        APIClient(connection: try resolve())
    }
}
