extension Substring {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace); cheaper
    /// than Foundation's trimmingCharacters(in:), which every request used to pay.
    var trimmingHTTPWhitespace: Substring {
        var trimmed = self
        while let first = trimmed.first, first == " " || first == "\t" { trimmed.removeFirst() }
        while let last = trimmed.last, last == " " || last == "\t" { trimmed.removeLast() }
        return trimmed
    }
}
