/// Aligned plain-text tables for human output.
///
/// Cells are made safe for a terminal: control characters (which could move the cursor
/// or recolour the screen if a device sent them) are shown escaped.
struct TableRenderer {
    var headers: [String]
    var rows: [[String]] = []

    init(_ headers: [String], rows: [[String]] = []) {
        self.headers = headers
        self.rows = rows
    }

    mutating func append(_ row: [String]) { rows.append(row) }

    /// The header line and one line per row, columns separated by two spaces, with no
    /// trailing spaces.
    func render() -> String {
        let cells = ([headers] + rows).map { row in
            (0..<headers.count).map { index in index < row.count ? Self.safe(row[index]) : "" }
        }
        let widths = (0..<headers.count).map { column in cells.map { $0[column].count }.max() ?? 0 }
        return cells.map { row in
            var line = ""
            for (column, cell) in row.enumerated() {
                line += cell
                if column < row.count - 1 { line += String(repeating: " ", count: widths[column] - cell.count + 2) }
            }
            while line.hasSuffix(" ") { line.removeLast() }
            return line
        }.joined(separator: "\n")
    }

    /// A key/value listing for one object: keys in the first column.
    static func fields(_ pairs: [(String, String)]) -> String {
        let width = pairs.map { $0.0.count }.max() ?? 0
        return pairs.map { key, value in
            let line = key + String(repeating: " ", count: width - key.count + 2) + safe(value)
            return line.hasSuffix(" ") ? String(line.reversed().drop { $0 == " " }.reversed()) : line
        }.joined(separator: "\n")
    }

    /// `text` with control characters escaped as `\u{XX}`.
    static func safe(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                result += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
