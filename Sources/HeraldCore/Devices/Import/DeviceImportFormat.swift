/// The formats of a device import file.
public enum DeviceImportFormat: String, Sendable, CaseIterable {
    /// One JSON object per line (`application/x-ndjson`).
    case ndjson
    /// Comma-separated values with a header row naming the columns (`text/csv`).
    case csv

    /// The format a `Content-Type` names (parameters such as `charset` ignored), or nil.
    public init?(contentType: String) {
        let mediaType = contentType.split(separator: ";", maxSplits: 1).first.map {
            $0.trimmingWhitespace().lowercased()
        }
        switch mediaType {
        case "application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines": self = .ndjson
        case "text/csv": self = .csv
        default: return nil
        }
    }

    /// The media type a client sends for this format.
    public var mediaType: String {
        switch self {
        case .ndjson: "application/x-ndjson"
        case .csv: "text/csv"
        }
    }

    /// The fields of a row, as NDJSON keys and CSV column names.
    public enum Field: String, Sendable, CaseIterable, CodingKey {
        case registrationID = "registration_id"
        case platform
        case apnsToken = "apns_token"
        case apnsEnvironment = "apns_environment"
        case voipToken = "voip_token"
        case alias
        case tags
        case mobile
    }
}

extension Substring {
    func trimmingWhitespace() -> String {
        String(self).trimmingWhitespace()
    }
}
