import Foundation

/// Reads the lines of a device import file (``ImportLineSplitter``) into devices to
/// import and rejected rows.
///
/// Only the start of a file can make the whole file wrong, and it is read before anything
/// is written: an NDJSON file whose first line is not a JSON object, or a CSV file whose
/// header is missing, names an unknown column or lacks `registration_id`, throws. After
/// that every line stands alone: a bad row is rejected with its reason and the others
/// are read on.
public struct DeviceImportReader: Sendable {
    public enum Output: Sendable, Hashable {
        case device(ImportedDevice)
        case rejected(RejectedImportRow)
        /// A blank line, or the CSV header.
        case nothing
    }

    public let format: DeviceImportFormat
    /// The CSV header's fields, in column order, once read.
    private var columns: [DeviceImportFormat.Field]?
    private var started = false

    public init(format: DeviceImportFormat) {
        self.format = format
    }

    /// Whether the file's first line (and for CSV its header) has been read.
    public var hasStarted: Bool { started }

    public mutating func read(_ line: ImportLineSplitter.Line) throws(HeraldError) -> Output {
        switch line {
        case .tooLong(let number):
            guard started else { throw HeraldError(.invalidJSON, "line \(number): longer than the limit of a row, so not \(format.name)") }
            return .rejected(RejectedImportRow(line: number, registrationID: nil, reason: "line: longer than the limit of a row"))
        case .text(let number, let bytes):
            if bytes.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) { return .nothing }
            switch format {
            case .ndjson: return try readJSON(bytes, line: number)
            case .csv: return try readCSV(bytes, line: number)
            }
        }
    }

    /// The error for a body that ended before its first row (or header) was read.
    public func checkStarted() throws(HeraldError) {
        guard started else {
            throw format == .csv ? HeraldError(.invalidField, "body: no CSV header row") : HeraldError(.invalidJSON, "body: no NDJSON row")
        }
    }

    private mutating func readJSON(_ bytes: [UInt8], line: Int) throws(HeraldError) -> Output {
        let row: JSONRow
        do {
            row = try JSONDecoder().decode(JSONRow.self, from: Data(bytes))
        } catch let error as HeraldError {
            started = true
            return .rejected(RejectedImportRow(line: line, registrationID: nil, reason: error.message))
        } catch let error as DecodingError {
            let fileLevel = Self.isRoot(error)
            guard started || !fileLevel else {
                throw HeraldError(.invalidJSON, "line \(line): not a JSON object, so the body is not NDJSON")
            }
            started = true
            return .rejected(RejectedImportRow(line: line, registrationID: nil, reason: Self.describe(error)))
        } catch {
            throw HeraldError(.invalidJSON, "line \(line): not a JSON object")
        }
        started = true
        return Self.output(row.fields.validated(line: line))
    }

    private mutating func readCSV(_ bytes: [UInt8], line: Int) throws(HeraldError) -> Output {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            guard started else { throw HeraldError(.invalidField, "line \(line): the CSV header is not UTF-8") }
            return .rejected(RejectedImportRow(line: line, registrationID: nil, reason: "line: not valid UTF-8"))
        }
        guard let cells = CSVLine.cells(text) else {
            guard started else { throw HeraldError(.invalidField, "line \(line): the CSV header has an unbalanced quote") }
            return .rejected(
                RejectedImportRow(line: line, registrationID: nil, reason: "line: a quote is not closed, or text follows a closing quote")
            )
        }
        guard let columns else {
            columns = try Self.header(cells, line: line)
            started = true
            return .nothing
        }
        guard cells.count == columns.count else {
            return .rejected(
                RejectedImportRow(line: line, registrationID: nil, reason: "line: \(cells.count) cells where the header has \(columns.count)")
            )
        }
        var fields = ImportRowFields()
        for (column, cell) in zip(columns, cells) {
            let value = cell.trimmingWhitespace()
            switch column {
            case .registrationID: fields.registrationID = value
            case .platform: fields.platform = value
            case .apnsToken: fields.apnsToken = value
            case .apnsEnvironment: fields.apnsEnvironment = value
            case .voipToken: fields.voipToken = value
            case .alias: fields.alias = value
            case .mobile: fields.mobile = value
            case .tags:
                fields.tags = value.isEmpty ? [] : value.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingWhitespace() }
            }
        }
        return Self.output(fields.validated(line: line))
    }

    private static func header(_ cells: [String], line: Int) throws(HeraldError) -> [DeviceImportFormat.Field] {
        let known = DeviceImportFormat.Field.allCases.map(\.rawValue).joined(separator: ", ")
        var columns: [DeviceImportFormat.Field] = []
        for cell in cells {
            let name = cell.trimmingWhitespace().lowercased()
            guard let field = DeviceImportFormat.Field(rawValue: name) else {
                throw HeraldError(.invalidField, "line \(line): CSV header: unknown column '\(name)' (expected a header row of \(known))")
            }
            guard !columns.contains(field) else { throw HeraldError(.invalidField, "line \(line): CSV header: column '\(name)' twice") }
            columns.append(field)
        }
        guard columns.contains(.registrationID) else {
            throw HeraldError(.invalidField, "line \(line): CSV header: no registration_id column (the first line must name the columns)")
        }
        return columns
    }

    private static func output(_ result: Result<ImportedDevice, RejectedImportRow>) -> Output {
        switch result {
        case .success(let device): .device(device)
        case .failure(let rejected): .rejected(rejected)
        }
    }

    /// Whether the line is not JSON at all, or JSON but not an object.
    private static func isRoot(_ error: DecodingError) -> Bool {
        switch error {
        case .dataCorrupted(let context), .typeMismatch(_, let context): context.codingPath.isEmpty
        default: false
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty: "line: not valid JSON"
        case .typeMismatch(_, let context) where context.codingPath.isEmpty: "line: not a JSON object"
        case .typeMismatch(_, let context): "\(CodingPath.describe(context.codingPath)): wrong type"
        case .dataCorrupted(let context), .valueNotFound(_, let context), .keyNotFound(_, let context):
            "\(CodingPath.describe(context.codingPath)): invalid value"
        @unknown default: "line: not the expected JSON"
        }
    }

    /// An NDJSON row: the fields of ``DeviceImportFormat/Field``, each optional (null is absent).
    private struct JSONRow: Decodable {
        var fields = ImportRowFields()

        init(from decoder: any Decoder) throws {
            typealias Field = DeviceImportFormat.Field
            let container = try decoder.strictContainer(keyedBy: Field.self)
            fields.registrationID = try container.decodeIfPresent(String.self, forKey: .registrationID)
            fields.platform = try container.decodeIfPresent(String.self, forKey: .platform)
            fields.apnsToken = try container.decodeIfPresent(String.self, forKey: .apnsToken)
            fields.apnsEnvironment = try container.decodeIfPresent(String.self, forKey: .apnsEnvironment)
            fields.voipToken = try container.decodeIfPresent(String.self, forKey: .voipToken)
            fields.alias = try container.decodeIfPresent(String.self, forKey: .alias)
            fields.tags = try container.decodeIfPresent([String].self, forKey: .tags)
            fields.mobile = try container.decodeIfPresent(String.self, forKey: .mobile)
        }
    }
}

extension DeviceImportFormat {
    var name: String {
        switch self {
        case .ndjson: "NDJSON"
        case .csv: "CSV"
        }
    }
}

/// The cells of one CSV line (RFC 4180 quoting, within one line): nil when a quote is not
/// closed or text follows a closing quote.
enum CSVLine {
    static func cells(_ line: String) -> [String]? {
        var cells: [String] = []
        var cell = ""
        var quoted = false
        var afterQuote = false
        var iterator = line.unicodeScalars.makeIterator()
        var pendingQuote = false
        while let scalar = iterator.next() {
            if quoted {
                if pendingQuote {
                    pendingQuote = false
                    if scalar == "\"" {
                        cell.unicodeScalars.append(scalar)
                        continue
                    }
                    quoted = false
                    afterQuote = true
                } else if scalar == "\"" {
                    pendingQuote = true
                    continue
                } else {
                    cell.unicodeScalars.append(scalar)
                    continue
                }
            }
            switch scalar {
            case ",":
                cells.append(cell)
                cell = ""
                afterQuote = false
            case "\"" where cell.isEmpty && !afterQuote:
                quoted = true
            case " " where afterQuote, "\t" where afterQuote:
                continue
            default:
                if afterQuote { return nil }
                if scalar == "\"" { return nil }
                cell.unicodeScalars.append(scalar)
            }
        }
        if quoted && !pendingQuote { return nil }
        cells.append(cell)
        return cells
    }
}
