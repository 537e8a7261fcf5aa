import HeraldCore
import Testing

/// Reading import files, without a server: lines split wherever chunks end, rows validated.
@Suite struct DeviceImportReaderTests {
    /// Every line of `text` when it arrives `chunkSize` bytes at a time.
    static func lines(_ text: String, chunkSize: Int, maxLineBytes: Int = 64) -> [ImportLineSplitter.Line] {
        var splitter = ImportLineSplitter(maxLineBytes: maxLineBytes)
        let bytes = Array(text.utf8)
        var lines: [ImportLineSplitter.Line] = []
        var start = 0
        while start < bytes.count {
            let chunk = Array(bytes[start..<min(bytes.count, start + chunkSize)])
            lines += chunk.withUnsafeBytes { splitter.feed($0) }
            start += chunkSize
        }
        return lines + splitter.finish()
    }

    @Test func linesAreTheSameWhereverTheChunksEnd() {
        let text = "\u{FEFF}first\r\nsecond\n\nthird line without end"
        let expected: [ImportLineSplitter.Line] = [
            .text(number: 1, bytes: Array("first".utf8)), .text(number: 2, bytes: Array("second".utf8)),
            .text(number: 3, bytes: []), .text(number: 4, bytes: Array("third line without end".utf8)),
        ]
        for chunkSize in [1, 2, 3, 5, 1000] {
            #expect(Self.lines(text, chunkSize: chunkSize) == expected, "chunks of \(chunkSize)")
        }
    }

    @Test func aLineOverTheLimitIsReportedAndItsBytesDropped() {
        let text = "short\n" + String(repeating: "x", count: 100) + "\nafter\n"
        for chunkSize in [1, 7, 1000] {
            #expect(
                Self.lines(text, chunkSize: chunkSize, maxLineBytes: 10)
                    == [.text(number: 1, bytes: Array("short".utf8)), .tooLong(number: 2), .text(number: 3, bytes: Array("after".utf8))]
            )
        }
    }

    @Test func csvCellsFollowRFC4180WithinALine() throws {
        var reader = DeviceImportReader(format: .csv)
        #expect(try reader.read(.text(number: 1, bytes: Array("registration_id, alias ,tags".utf8))) == .nothing)
        let row = try reader.read(.text(number: 2, bytes: Array(#"0900e8d85ef,"a ""b"", c","x, y,z""#.utf8)))
        #expect(
            row == .device(ImportedDevice(line: 2, registrationID: "0900e8d85ef", platform: .android, alias: #"a "b", c"#, tags: ["x", "y", "z"]))
        )
        let broken = try reader.read(.text(number: 3, bytes: Array(#"0900e8d85ef,"open"#.utf8)))
        guard case .rejected(let rejected) = broken else {
            Issue.record("expected a rejection, got \(broken)")
            return
        }
        #expect(rejected.line == 3)
        let short = try reader.read(.text(number: 4, bytes: Array("0900e8d85ef".utf8)))
        #expect(short == .rejected(RejectedImportRow(line: 4, registrationID: nil, reason: "line: 1 cells where the header has 3")))
    }

    @Test func theFirstLineDecidesWhetherTheBodyIsTheFormatAtAll() throws {
        var ndjson = DeviceImportReader(format: .ndjson)
        #expect(throws: HeraldError.self) { try ndjson.read(.text(number: 1, bytes: Array("registration_id,platform".utf8))) }
        var started = DeviceImportReader(format: .ndjson)
        _ = try started.read(.text(number: 1, bytes: Array(#"{"registration_id": "nope"}"#.utf8)))
        // Once a row was read, a bad line is that line's problem only.
        #expect(
            try started.read(.text(number: 2, bytes: Array("registration_id,platform".utf8)))
                == .rejected(
                    RejectedImportRow(line: 2, registrationID: nil, reason: "line: not valid JSON")
                )
        )
    }

    @Test func jpushRegistrationIDsHaveTheirOwnLengths() {
        #expect(Identifiers.isRegistrationID("18071adc030dcba91c0"))
        #expect(Identifiers.isRegistrationID("0900e8d85ef"))
        #expect(Identifiers.isRegistrationID(Identifiers.newRegistrationID()))
        #expect(!Identifiers.isJPushRegistrationID(Identifiers.newRegistrationID()))
        #expect(!Identifiers.isRegistrationID("18071ADC030DCBA91C0"))
        #expect(!Identifiers.isRegistrationID("18071adc030dcba91c"))
        #expect(Identifiers.isMasterSecret("3f045fd404d09a8a1f38d791"))
        #expect(Identifiers.isMasterSecret(Identifiers.newMasterSecret()))
        #expect(!Identifiers.isMasterSecret("3f045fd404d09a8a1f38d79"))
    }
}
