/// Splits an import file into numbered lines as its bytes arrive, holding no more than
/// the line being read: a file of any size is read in constant memory.
///
/// Lines end with LF (a CR before it is dropped); a UTF-8 byte order mark at the start of
/// the file is skipped (spreadsheets write one). A line longer than ``maxLineBytes`` is
/// reported as ``Line/tooLong(number:)`` and its bytes are dropped as they come.
public struct ImportLineSplitter: Sendable {
    public enum Line: Sendable, Hashable {
        case text(number: Int, bytes: [UInt8])
        case tooLong(number: Int)
    }

    public let maxLineBytes: Int
    private var pending: [UInt8] = []
    private var overLimit = false
    private var number = 0
    private var atStart = true

    public init(maxLineBytes: Int) {
        self.maxLineBytes = maxLineBytes
    }

    /// The lines `chunk` completes.
    public mutating func feed(_ chunk: UnsafeRawBufferPointer) -> [Line] {
        var lines: [Line] = []
        var start = chunk.startIndex
        if atStart, !chunk.isEmpty {
            pending.append(contentsOf: chunk)
            guard pending.count >= 3 || !Self.byteOrderMark.starts(with: pending) else { return [] }
            atStart = false
            let buffered = pending
            pending = []
            let body = buffered.starts(with: Self.byteOrderMark) ? Array(buffered.dropFirst(3)) : buffered
            return body.withUnsafeBytes { feed($0) }
        }
        while start < chunk.endIndex {
            guard let newline = chunk[start...].firstIndex(of: UInt8(ascii: "\n")) else {
                append(chunk[start...])
                break
            }
            append(chunk[start..<newline])
            lines.append(endLine())
            start = newline + 1
        }
        return lines
    }

    /// The last line, when the file doesn't end with a line break.
    public mutating func finish() -> [Line] {
        if atStart {
            atStart = false
            let body = pending.starts(with: Self.byteOrderMark) ? Array(pending.dropFirst(3)) : pending
            pending = body
        }
        guard !pending.isEmpty || overLimit else { return [] }
        return [endLine()]
    }

    private mutating func append(_ bytes: Slice<UnsafeRawBufferPointer>) {
        guard !overLimit else { return }
        if pending.count + bytes.count > maxLineBytes + 1 {
            overLimit = true
            pending = []
        } else {
            pending.append(contentsOf: bytes)
        }
    }

    private mutating func endLine() -> Line {
        number += 1
        defer {
            pending.removeAll(keepingCapacity: true)
            overLimit = false
        }
        if pending.last == UInt8(ascii: "\r") { pending.removeLast() }
        if overLimit || pending.count > maxLineBytes { return .tooLong(number: number) }
        return .text(number: number, bytes: pending)
    }

    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
}
