import Foundation
import HeraldCore

/// The body of a batch single push, `{"pushlist": {"<cid>": {...}, ...}}`: up to 1,000
/// pushes, each to one device, each under the cid that makes it idempotent.
struct BatchPushRequest: Decodable {
    /// The most entries in one request (JPush's limit).
    static let maxEntries = 1000

    var pushlist: [String: JSONValue]

    enum CodingKeys: String, CodingKey, CaseIterable { case pushlist }

    init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        pushlist = try container.decode([String: JSONValue].self, forKey: .pushlist)
    }

    /// The entries, checked as a whole: at least one, at most ``maxEntries``.
    func entries() throws(HeraldError) -> [(cid: String, body: JSONValue)] {
        if pushlist.isEmpty { throw .invalidField("pushlist", "must name at least one cid") }
        if pushlist.count > Self.maxEntries {
            throw .limit("pushlist", "at most \(Self.maxEntries) pushes per request (got \(pushlist.count))")
        }
        return pushlist.sorted { $0.key < $1.key }.map { (cid: $0.key, body: $0.value) }
    }
}

/// How a batch names each entry's device in `target`.
enum BatchTarget: Sendable {
    case registrationID
    case alias

    /// The audience key `target` stands for.
    var audienceKey: String {
        switch self {
        case .registrationID: "registration_id"
        case .alias: "alias"
        }
    }

    /// `target`, checked to be a registration id or an alias.
    func validated(_ target: String) throws(HeraldError) -> String {
        switch self {
        case .registrationID:
            guard Identifiers.isRegistrationID(target) else { throw .invalidField("target", "not a registration id") }
            return target
        case .alias:
            return try Validation.label(target, field: "target")
        }
    }
}

/// One entry of a batch, turned into the push it stands for.
struct BatchPushEntry {
    var cid: String
    /// The registration id or alias the push is for.
    var target: String
    var request: PushRequest
    var push: Push
    /// The warnings for the keys of the entry Herald ignored (``UnknownFields``).
    var ignoredFieldWarnings: [String] = []

    /// Reads an entry: `target` becomes the audience and the cid the push's `cid`; every
    /// other field is the push's own, decoded (by its fast reader when it can) and
    /// validated by ``PushRequest`` as `POST /v3/push` does, so the entry takes exactly the
    /// fields a push takes.
    init(cid: String, body: JSONValue, target kind: BatchTarget) throws {
        guard case .object(var fields) = body else {
            throw HeraldError.invalidField("pushlist.\(cid)", "expected an object (got \(body.kind))")
        }
        for key in ["audience", "cid"] where fields[key] != nil {
            throw HeraldError(.unsupportedKey, "\(key): unknown field (an entry names its device in target, and its key is its cid)")
        }
        guard let value = fields.removeValue(forKey: "target") else { throw HeraldError.missingField("target", "is required") }
        guard case .string(let target) = value else { throw HeraldError.invalidField("target", "expected a string") }
        self.cid = cid
        self.target = try kind.validated(target)
        fields["audience"] = .object([kind.audienceKey: .array([.string(self.target)])])
        fields["cid"] = .string(cid)
        let json = try Self.encoder.encode(JSONValue.object(fields))
        let unknownFields = UnknownFields()
        if let read = json.withUnsafeBytes(PushRequest.fastRead) {
            request = read
        } else {
            do {
                request = try unknownFields.jsonDecoder.decode(PushRequest.self, from: json)
            } catch let error as DecodingError {
                throw JSONBody.translate(error)
            }
        }
        // A configuration comes from the category the entry names (the route resolves it).
        try request.checkNoCategoryConfig()
        push = try request.validated()
        ignoredFieldWarnings = unknownFields.warnings
        push.warnings = ignoredFieldWarnings + push.warnings
    }

    /// Keys as they are: the push decoder reads JSON's own names.
    private static let encoder = JSONEncoder()
}
