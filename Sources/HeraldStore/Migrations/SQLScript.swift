/// Splits a SQL script into statements, because the extended query protocol runs one
/// statement at a time.
///
/// Semicolons inside quotes, quoted identifiers, comments and dollar-quoted bodies don't
/// split; comment-only fragments are dropped.
public enum SQLScript {
    public static func statements(_ script: String) -> [String] {
        let chars = Array(script.unicodeScalars)
        var statements: [String] = []
        var current = String.UnicodeScalarView()
        var meaningful = false
        var index = 0

        func flush() {
            let text = String(current).trimmingCharacters()
            if meaningful, !text.isEmpty { statements.append(text) }
            current = String.UnicodeScalarView()
            meaningful = false
        }
        func copy(until end: Int) {
            while index < end, index < chars.count {
                current.append(chars[index])
                index += 1
            }
        }

        while index < chars.count {
            let char = chars[index]
            let next: Unicode.Scalar? = index + 1 < chars.count ? chars[index + 1] : nil
            switch char {
            case "-" where next == "-":
                while index < chars.count, chars[index] != "\n" { index += 1 }
            case "/" where next == "*":
                var depth = 0
                repeat {
                    if chars[index] == "/", index + 1 < chars.count, chars[index + 1] == "*" {
                        depth += 1
                        index += 2
                    } else if chars[index] == "*", index + 1 < chars.count, chars[index + 1] == "/" {
                        depth -= 1
                        index += 2
                    } else {
                        index += 1
                    }
                } while depth > 0 && index < chars.count
            case "'", "\"":
                meaningful = true
                var end = index + 1
                while end < chars.count {
                    if chars[end] == char {
                        if end + 1 < chars.count, chars[end + 1] == char {
                            end += 2
                            continue
                        }
                        break
                    }
                    end += 1
                }
                copy(until: end + 1)
            case "$":
                meaningful = true
                if let tagEnd = dollarTagEnd(chars, from: index) {
                    let tag = Array(chars[index...tagEnd])
                    var end = tagEnd + 1
                    while end < chars.count, !chars[end...].starts(with: tag) { end += 1 }
                    copy(until: min(end + tag.count, chars.count))
                } else {
                    copy(until: index + 1)
                }
            case ";":
                index += 1
                flush()
            default:
                if !char.properties.isWhitespace { meaningful = true }
                copy(until: index + 1)
            }
        }
        flush()
        return statements
    }

    /// The index of the closing `$` of a dollar-quote tag starting at `start`, if any.
    private static func dollarTagEnd(_ chars: [Unicode.Scalar], from start: Int) -> Int? {
        var index = start + 1
        while index < chars.count {
            let char = chars[index]
            if char == "$" { return index }
            guard char == "_" || char.properties.isAlphabetic || (index > start + 1 && ("0"..."9").contains(char)) else {
                return nil
            }
            index += 1
        }
        return nil
    }
}

extension String {
    func trimmingCharacters() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
