extension JSONObjectWriter {
    /// The notification as devices other than Android ones get it: the iOS part's alert
    /// (its title, subtitle and body, and its localization keys), badge, sound and extras,
    /// falling back to `notification.alert`, and the VoIP payload.
    mutating func writeDeviceNotification(_ notification: PushNotification) {
        let ios = notification.ios
        var alert = notification.alert
        var localization: [(key: String, value: IOSAlert.LocalizationValue)] = []
        switch ios?.alert {
        case .text(let text):
            alert = text
        case .parts(let parts):
            field("title", parts.title)
            field("subtitle", parts.subtitle)
            alert = parts.body ?? notification.alert
            localization = parts.localization
        case nil:
            break
        }
        field("alert", alert)
        for (key, value) in localization {
            switch value {
            case .text(let text): field(key, text)
            case .list(let values): field(key, values)
            }
        }
        if case .set(let value) = ios?.badge { field("badge", value) }
        switch ios?.sound {
        case .named(let name):
            field("sound", name)
        case .critical(let sound):
            object("sound") { fields in
                fields.field("critical", sound.critical)
                fields.field("name", sound.name)
                fields.field("volume", sound.volume.map(JSONValue.double))
            }
        case nil:
            break
        }
        field("extras", ios?.extras)
        field("media_url", ios?.mediaURL)
        field("notification_config", ios?.notificationConfig)
        // Rendered per device where the center knows the device (APNs, a copy sent live);
        // a copy kept in the inbox carries every language for the SDK to choose alike.
        if let localizations = ios?.localizations {
            field("localizations", localizations.mapValues(\.json))
        }
        field("voip", notification.voip?.fields)
    }

    /// The notification as Android devices get it: the Android part's fields as given, its
    /// alert falling back to `notification.alert`.
    mutating func writeAndroidNotification(_ notification: PushNotification) {
        let fields = notification.android?.fields ?? [:]
        field("alert", notification.android?.alert ?? notification.alert)
        for key in fields.keys.sorted() where key != "alert" {
            field(key, fields[key])
        }
    }
}
