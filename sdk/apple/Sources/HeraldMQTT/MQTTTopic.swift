/// Topic name and topic filter rules of MQTT 3.1.1 section 4.7.
enum MQTTTopic {
    private static let slash = UInt8(ascii: "/")
    private static let plus = UInt8(ascii: "+")
    private static let hash = UInt8(ascii: "#")

    /// A topic name, as in PUBLISH or a will: at least one character, no wildcards.
    static func validateName(_ name: String) throws(MQTTProtocolError) {
        let utf8 = name.utf8
        guard !utf8.isEmpty, !utf8.contains(where: { $0 == Self.plus || $0 == Self.hash }) else {
            throw .invalidTopicName
        }
    }

    /// A topic filter, as in SUBSCRIBE or UNSUBSCRIBE: at least one character; `+` fills a
    /// whole level; `#` fills a whole level and is the last one.
    static func validateFilter(_ filter: String) throws(MQTTProtocolError) {
        let utf8 = filter.utf8
        guard !utf8.isEmpty else {
            throw .invalidTopicFilter
        }
        var previous: UInt8? = nil
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            let nextIndex = utf8.index(after: index)
            let next: UInt8? = nextIndex == utf8.endIndex ? nil : utf8[nextIndex]
            if byte == Self.plus || byte == Self.hash {
                let startsLevel = previous == nil || previous == Self.slash
                let endsLevel = next == nil || next == Self.slash
                guard startsLevel, endsLevel, byte == Self.plus || next == nil else {
                    throw .invalidTopicFilter
                }
            }
            previous = byte
            index = nextIndex
        }
    }
}
