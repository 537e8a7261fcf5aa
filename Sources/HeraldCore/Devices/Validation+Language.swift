extension Validation {
    /// Bytes in a language tag.
    public static let maxLanguageBytes = 35

    /// A BCP 47 language tag (`zh-Hans-CN`, `en-US`, `pt`): a 2 to 8 letter language
    /// subtag, then subtags of 1 to 8 letters and digits, joined by `-` (an `_`, as
    /// Apple's locale identifiers write it, is taken for one). Answers it with `-`.
    public static func language(_ value: String, field: String) throws(HeraldError) -> String {
        let tag = value.replacingUnderscores
        let subtags = tag.split(separator: "-", omittingEmptySubsequences: false)
        guard tag.utf8.count <= maxLanguageBytes, let first = subtags.first, (2...8).contains(first.utf8.count),
            first.utf8.allSatisfy(\.isASCIILetter),
            subtags.dropFirst().allSatisfy({ (1...8).contains($0.utf8.count) && $0.utf8.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit } })
        else {
            throw .invalidField(field, "must be a BCP 47 language tag such as en, en-US or zh-Hans-CN (at most \(maxLanguageBytes) bytes)")
        }
        return tag
    }
}

extension String {
    fileprivate var replacingUnderscores: String {
        String(String.UnicodeScalarView(unicodeScalars.map { $0 == "_" ? "-" : $0 }))
    }
}

extension UInt8 {
    fileprivate var isASCIILetter: Bool { (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) }
    fileprivate var isASCIIDigit: Bool { (0x30...0x39).contains(self) }
}
