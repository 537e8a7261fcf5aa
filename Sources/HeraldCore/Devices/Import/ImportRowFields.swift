/// A row of an import file as written, before validation: every field optional, an
/// empty value the same as an absent one.
struct ImportRowFields: Sendable {
    var registrationID: String?
    var platform: String?
    var apnsToken: String?
    var apnsEnvironment: String?
    var voipToken: String?
    var alias: String?
    var tags: [String]?
    var mobile: String?

    /// The row validated: the device to import, or why the row is rejected.
    func validated(line: Int) -> Result<ImportedDevice, RejectedImportRow> {
        let registrationID = registrationID.flatMap { $0.isEmpty ? nil : $0 }
        do throws(HeraldError) {
            return .success(try device(line: line, registrationID: registrationID))
        } catch {
            return .failure(RejectedImportRow(line: line, registrationID: registrationID, reason: error.message))
        }
    }

    private func device(line: Int, registrationID: String?) throws(HeraldError) -> ImportedDevice {
        guard let registrationID else { throw .invalidField("registration_id", "is required") }
        guard Identifiers.isRegistrationID(registrationID) else {
            throw .invalidField("registration_id", "not a registration id (JPush's are 11 or 19 lowercase hex characters)")
        }
        let apnsToken = try Self.present(self.apnsToken).map { token throws(HeraldError) in try Validation.apnsToken(token, field: "apns_token") }
        let voipToken = try Self.present(self.voipToken).map { token throws(HeraldError) in try Validation.apnsToken(token, field: "voip_token") }
        let platform = try Self.platform(Self.present(self.platform), registrationID: registrationID, hasTokens: apnsToken != nil || voipToken != nil)
        if !platform.usesAPNs, apnsToken != nil || voipToken != nil {
            throw .invalidField(apnsToken != nil ? "apns_token" : "voip_token", "only Apple platforms have APNs tokens")
        }
        var environment: APNsEnvironment?
        if let value = Self.present(apnsEnvironment) {
            guard let parsed = APNsEnvironment(rawValue: value) else { throw .invalidField("apns_environment", "must be production or sandbox") }
            guard apnsToken != nil else { throw .invalidField("apns_environment", "is given only with apns_token") }
            environment = parsed
        }
        let alias = try Self.present(self.alias).map { value throws(HeraldError) in try Validation.label(value, field: "alias") }
        let tags = try Validation.labels(self.tags ?? [], field: "tags", max: Limits.maxTagsPerDevice)
        let mobile = try Self.present(self.mobile).map { value throws(HeraldError) in try Validation.mobile(value) }
        return ImportedDevice(
            line: line,
            registrationID: registrationID,
            platform: platform,
            apnsToken: apnsToken,
            apnsEnvironment: environment,
            voipToken: voipToken,
            alias: alias,
            tags: tags,
            mobile: mobile
        )
    }

    private static func present(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }

    /// The row's platform; without one, an APNs or VoIP token says iOS, and a JPush
    /// registration id says it with its third character (0 Android, 1 iOS).
    private static func platform(_ value: String?, registrationID: String, hasTokens: Bool) throws(HeraldError) -> Platform {
        if let value {
            guard let platform = Platform(rawValue: value) else {
                throw .invalidField("platform", "must be one of \(Platform.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return platform
        }
        if hasTokens { return .ios }
        if Identifiers.isJPushRegistrationID(registrationID) {
            switch registrationID.utf8.dropFirst(2).first {
            case UInt8(ascii: "0"): return .android
            case UInt8(ascii: "1"): return .ios
            default: break
            }
        }
        throw .invalidField("platform", "is required (this registration id doesn't tell it)")
    }
}
