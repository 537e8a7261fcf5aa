import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writing to stdout and stderr, and what kind of terminal they are.
enum Terminal {
    /// Writes `text` and a newline to stdout.
    static func print(_ text: String) {
        write(text + "\n")
    }

    /// Writes `text` to stdout as is.
    static func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// Writes raw bytes and a newline to stdout (the API's JSON for `--json`).
    static func printRaw(_ data: Data) {
        var data = data
        if data.last != UInt8(ascii: "\n") { data.append(UInt8(ascii: "\n")) }
        FileHandle.standardOutput.write(data)
    }

    /// Writes `text` and a newline to stderr.
    static func warn(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Whether stdin is a terminal, where a question can be answered.
    static var stdinIsTTY: Bool { isatty(STDIN_FILENO) == 1 }

    /// Whether stdout is a terminal, where live progress can be redrawn in place.
    static var stdoutIsTTY: Bool { isatty(STDOUT_FILENO) == 1 }

    /// Whether to colour output: a terminal, and `NO_COLOR` unset (https://no-color.org).
    static var useColor: Bool {
        stdoutIsTTY && (ProcessInfo.processInfo.environment["NO_COLOR"] ?? "").isEmpty
            && ProcessInfo.processInfo.environment["TERM"] != "dumb"
    }

    /// The terminal's width in columns, 80 when unknown.
    static var width: Int {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init), columns > 0 { return columns }
        return 80
    }
}
