import ArgumentParser
import Foundation

/// `heraldctl push`: send a notification or an in-app message to an audience.
struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Send a notification or in-app message; --dry-run counts the audience, --wait follows delivery.",
        discussion: """
            Audience: --all, or any of --rid, --alias, --tag (any of the tags), --tag-and (all of \
            them) and --tag-not (none of them); each is repeatable.
            Examples:
              heraldctl push --alias alice --alert "Your order shipped" --badge +1 --wait
              heraldctl push --tag vip --tag-not muted --title Sale --alert "20% off" --ttl 3600
              heraldctl push --rid 0123456789abcdef0123 --silent --extra sync=inbox
              heraldctl push --all --message '{"kind": "refresh"}' --dry-run
              heraldctl push --tag vip --alert "New season" --spread 60
              heraldctl push --body jpush-request.json
              heraldctl push --all --alert "Happy new year" --at "2026-12-31 23:59:00"
              heraldctl push --tag news --alert "Morning digest" --every day --time 09:00:00 --local-time
              heraldctl push --all --alert "Weekly" --every week --point MON --point FRI --time 18:00:00 --end "2027-06-01 00:00:00"
            --body sends a whole request (JPush's v3 shape) as it is, from a file or - for \
            stdin; fields Herald accepts but does not act on are printed as warnings.
            --at and --every send later instead of now: they make a schedule (JPush's schedule \
            API) and print its id; `heraldctl schedules` lists, shows and changes schedules. \
            Times are wall times in --time-zone, else the app's zone; --local-time sends at that \
            wall time in each device's own zone.
            """
    )

    enum InterruptionLevel: String, ExpressibleByArgument, CaseIterable {
        case passive, active
        case timeSensitive = "time-sensitive"
        case critical
    }

    @Flag(help: "Every device of the app.") var all = false
    @Option(name: .customLong("rid"), help: ArgumentHelp("A registration id (repeatable).", valueName: "rid")) var registrationIDs: [String] = []
    @Option(name: .customLong("alias"), help: ArgumentHelp("Devices with this alias (repeatable).", valueName: "alias")) var aliases: [String] = []
    @Option(name: .customLong("tag"), help: ArgumentHelp("Devices with any of these tags (repeatable).", valueName: "tag")) var tags: [String] = []
    @Option(name: .customLong("tag-and"), help: ArgumentHelp("Devices with all of these tags (repeatable).", valueName: "tag"))
    var tagsAnd: [String] = []
    @Option(name: .customLong("tag-not"), help: ArgumentHelp("Leave out devices with any of these tags (repeatable).", valueName: "tag"))
    var tagsNot: [String] = []

    @Option(help: "The notification's text.") var alert: String?
    @Option(help: "The notification's title (iOS).") var title: String?
    @Option(help: "The notification's subtitle (iOS).") var subtitle: String?
    @Option(help: ArgumentHelp("The app icon's badge: a number, or +N / -N to change it (write --badge=-1).", valueName: "n|+n|-n"))
    var badge: String?
    @Option(help: "A sound file name of the app, or `default`.") var sound: String?
    @Option(
        name: .customLong("extra"),
        help: ArgumentHelp("A custom key=value for the app (repeatable); goes with the notification and the message.", valueName: "key=value")
    )
    var extras: [String] = []
    @Option(help: "Groups notifications on the device (iOS thread-id).") var threadID: String?
    @Option(help: "The notification category, for its actions: one defined with `heraldctl categories` carries its actions and routes.")
    var category: String?
    @Option(help: ArgumentHelp("An image, GIF, audio or video the app's service extension attaches (http or https).", valueName: "url"))
    var mediaURL: String?
    @Flag(help: "Let the app's notification service extension change the notification.") var mutableContent = false
    @Option(help: "How the notification interrupts the user.") var interruptionLevel: InterruptionLevel?
    @Flag(help: "A background push: content-available, no alert or sound.") var silent = false
    @Flag(help: "A VoIP push (PushKit).") var voip = false
    @Option(
        name: .customLong("message"),
        help: ArgumentHelp("Send this in-app message (delivered over the MQTT connection only).", valueName: "text")
    )
    var messageContent: String?
    @Option(help: "The in-app message's title.") var messageTitle: String?
    @Option(help: "The in-app message's content type.") var contentType: String?

    @Option(name: .customLong("ttl"), help: ArgumentHelp("Seconds to keep the push for offline devices.", valueName: "seconds")) var timeToLive: Int?
    @Option(help: "An identifier for the push, to recall or replace it later.") var identifier: String?
    @Option(help: ArgumentHelp("Replace the notification pushed earlier with this identifier.", valueName: "identifier")) var replace: String?
    @Option(help: "A client id: the same cid twice sends once.") var cid: String?
    @Option(help: "Which APNs to use (default: each device's own).") var apnsEnvironment: APNsCommand.Environment?
    @Option(help: "The APNs priority: 10 (now), 5 (power-friendly) or 1.") var priority: Int?
    @Option(help: ArgumentHelp("Spread the push evenly over this many minutes (1 to 1400).", valueName: "minutes")) var spread: Int?

    @Option(
        help: ArgumentHelp(
            "Send this JSON request body (JPush's v3 shape) as it is, instead of one built from the options: a file, or - for stdin.",
            valueName: "file"
        )
    )
    var body: String?

    @Option(help: ArgumentHelp("Send once, later, at this wall time (makes a schedule; prints its id).", valueName: "YYYY-MM-DD HH:MM:SS"))
    var at: String?
    @Option(help: ArgumentHelp("Send again and again, every day, week or month (makes a schedule; with --time).", valueName: "unit"))
    var every: ScheduleUnit?
    @Option(help: ArgumentHelp("With --every: the time of day.", valueName: "HH:MM:SS")) var time: String?
    @Option(
        name: .customLong("point"),
        help: ArgumentHelp("With --every week: a weekday MON..SUN; with --every month: a day 01..31 (repeatable).", valueName: "point")
    )
    var points: [String] = []
    @Option(help: ArgumentHelp("With --every: every N days, weeks or months (default 1).", valueName: "n")) var frequency: Int?
    @Option(help: ArgumentHelp("With --every: from this wall time (default: today 00:00:00).", valueName: "YYYY-MM-DD HH:MM:SS"))
    var start: String?
    @Option(help: ArgumentHelp("With --every: until this wall time (default: a year after --start).", valueName: "YYYY-MM-DD HH:MM:SS"))
    var end: String?
    @Flag(help: "With --at or --every: at that wall time in each device's own time zone.") var localTime = false
    @Option(help: ArgumentHelp("With --at or --every: the IANA zone of the times (default: the app's).", valueName: "zone")) var timeZone: String?
    @Option(help: ArgumentHelp("With --at or --every: the schedule's name (letters, digits, _).", valueName: "name")) var scheduleName: String?

    @Flag(help: "Only count the audience (POST /v3/push/validate); send nothing.") var dryRun = false
    @Flag(
        help:
            "After sending, follow delivery until routing is done; copies for offline devices may still wait (heraldctl status --watch follows them). With --json: the final report as a second JSON line."
    )
    var wait = false
    @Option(help: ArgumentHelp("With --wait: give up after this many seconds (exit status 75).", valueName: "seconds"))
    var waitTimeout: Double?

    @OptionGroup(title: "Connection") var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions

    var targets: PushRequest.Targets {
        PushRequest.Targets(registrationIDs: registrationIDs, aliases: aliases, tags: tags, tagsAnd: tagsAnd, tagsNot: tagsNot)
    }

    func validate() throws {
        try validateSchedule()
        if body != nil {
            try validateWholeBody()
            return
        }
        if all, !targets.isEmpty {
            throw ValidationError("--all cannot be combined with --rid, --alias, --tag, --tag-and or --tag-not.")
        }
        if !all, targets.isEmpty {
            throw ValidationError("Choose an audience: --all, or --rid, --alias, --tag, --tag-and, --tag-not.")
        }
        if !tagsNot.isEmpty, registrationIDs.isEmpty, aliases.isEmpty, tags.isEmpty, tagsAnd.isEmpty {
            throw ValidationError("--tag-not only narrows an audience: add --rid, --alias, --tag or --tag-and.")
        }
        let notification = alert != nil || title != nil || subtitle != nil || badge != nil || sound != nil || silent || voip
        if !notification, messageContent == nil {
            throw ValidationError("Nothing to send: give --alert, --title, --badge, --silent or --voip (a notification), or --message.")
        }
        if silent {
            let conflicting = [("--alert", alert), ("--title", title), ("--subtitle", subtitle), ("--sound", sound)]
                .filter { $0.1 != nil }.map(\.0)
            if !conflicting.isEmpty {
                throw ValidationError("--silent is a background push without an alert; remove \(conflicting.joined(separator: ", ")).")
            }
            if voip { throw ValidationError("--silent and --voip are exclusive.") }
        }
        if let badge, PushRequest.IOS.Badge(badge) == nil {
            throw ValidationError("--badge must be a number (3), or +N / -N to change the badge (+1, --badge=-1); got '\(badge)'.")
        }
        if let replace {
            if let identifier, identifier != replace {
                throw ValidationError("--identifier must be left out or equal --replace (the new notification takes the old one's place).")
            }
            if !notification { throw ValidationError("--replace replaces a notification: add --alert or another notification flag.") }
        }
        _ = try Self.parseExtras(extras)
        if messageContent == nil, messageTitle != nil || contentType != nil {
            throw ValidationError("--message-title and --content-type go with --message.")
        }
        if let timeToLive, timeToLive < 0 { throw ValidationError("--ttl must be 0 or more seconds.") }
        if let priority, ![1, 5, 10].contains(priority) { throw ValidationError("--priority must be 10, 5 or 1.") }
        if let spread, !(1...1400).contains(spread) { throw ValidationError("--spread must be 1 to 1400 minutes.") }
        if dryRun, wait { throw ValidationError("--dry-run sends nothing, so there is nothing to --wait for.") }
        if let waitTimeout {
            if !wait { throw ValidationError("--wait-timeout goes with --wait.") }
            if waitTimeout <= 0 { throw ValidationError("--wait-timeout must be more than 0 seconds.") }
        }
    }

    /// With `--body`, only the options that say how to send it may be given.
    func validateWholeBody() throws {
        let content: [(String, Bool)] = [
            ("--all", all), ("--rid, --alias, --tag, --tag-and, --tag-not", !targets.isEmpty), ("--alert", alert != nil),
            ("--title", title != nil), ("--subtitle", subtitle != nil), ("--badge", badge != nil), ("--sound", sound != nil),
            ("--thread-id", threadID != nil), ("--category", category != nil), ("--media-url", mediaURL != nil),
            ("--mutable-content", mutableContent),
            ("--interruption-level", interruptionLevel != nil), ("--silent", silent), ("--voip", voip), ("--extra", !extras.isEmpty),
            ("--message", messageContent != nil), ("--message-title", messageTitle != nil), ("--content-type", contentType != nil),
            ("--ttl", timeToLive != nil), ("--identifier", identifier != nil), ("--replace", replace != nil), ("--cid", cid != nil),
            ("--apns-environment", apnsEnvironment != nil), ("--priority", priority != nil), ("--spread", spread != nil),
        ]
        let given = content.filter(\.1).map(\.0)
        if !given.isEmpty {
            throw ValidationError("--body is the whole request; put \(given.joined(separator: ", ")) in it instead.")
        }
        if dryRun, wait { throw ValidationError("--dry-run sends nothing, so there is nothing to --wait for.") }
        if let waitTimeout {
            if !wait { throw ValidationError("--wait-timeout goes with --wait.") }
            if waitTimeout <= 0 { throw ValidationError("--wait-timeout must be more than 0 seconds.") }
        }
    }

    /// The bytes of `--body`: the file, or stdin for `-`.
    func bodyBytes(_ path: String) throws(CLIError) -> Data {
        if path == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        guard let data = FileManager.default.contents(atPath: path) else { throw CLIError.usage("cannot read \(path)") }
        return data
    }

    /// `["k=v", ...]` as a dictionary; a missing `=`, an empty key or a repeated key is an error.
    static func parseExtras(_ pairs: [String]) throws -> [String: String] {
        var extras: [String: String] = [:]
        for pair in pairs {
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw ValidationError("--extra must be key=value; got '\(pair)'.")
            }
            let key = String(pair[..<equals])
            if extras[key] != nil { throw ValidationError("--extra \(key) is given twice.") }
            extras[key] = String(pair[pair.index(after: equals)...])
        }
        return extras
    }

    /// The body the flags describe.
    func request() throws -> PushRequest {
        let extras = try Self.parseExtras(extras)
        var ios = PushRequest.IOS()
        if title != nil || subtitle != nil { ios.alert = .fields(title: title, subtitle: subtitle, body: alert) }
        ios.sound = sound
        ios.badge = badge.flatMap(PushRequest.IOS.Badge.init)
        ios.threadID = threadID
        ios.category = category
        ios.mediaURL = mediaURL
        ios.mutableContent = mutableContent ? true : nil
        ios.interruptionLevel = interruptionLevel?.rawValue
        if silent {
            ios.contentAvailable = true
            ios.pushType = "background"
        }
        if voip { ios.pushType = "voip" }

        let hasNotification = alert != nil || title != nil || subtitle != nil || badge != nil || sound != nil || silent || voip
        var notification: PushRequest.Notification?
        if hasNotification {
            if !extras.isEmpty { ios.extras = extras }
            let hasIOS =
                ios.alert != nil || ios.sound != nil || ios.badge != nil || ios.threadID != nil || ios.category != nil
                || ios.mediaURL != nil || ios.mutableContent != nil || ios.interruptionLevel != nil || ios.pushType != nil || ios.extras != nil
            notification = PushRequest.Notification(alert: alert, ios: hasIOS ? ios : nil)
        }
        let message = messageContent.map {
            PushRequest.Message(msgContent: $0, title: messageTitle, contentType: contentType, extras: extras.isEmpty ? nil : extras)
        }
        let options = PushRequest.Options(
            timeToLive: timeToLive,
            identifier: identifier,
            replace: replace,
            apnsProduction: apnsEnvironment.map { $0 == .production },
            priority: priority,
            bigPushDuration: spread
        )
        return PushRequest(
            audience: all ? .all : .targets(targets),
            notification: notification,
            message: message,
            options: options.isEmpty ? nil : options,
            cid: cid
        )
    }

    func run() async throws {
        let client = try connection.client()
        let bytes: Data
        if let body {
            bytes = try bodyBytes(body)
        } else {
            bytes = try APIClient.json(try request())
        }
        if isScheduled {
            try await schedule(push: bytes, client: client)
            return
        }
        if dryRun {
            let response = try await client.send("POST", "/v3/push/validate", body: bytes, .app)
            try output.emit(response) { () throws(CLIError) in
                let size = try response.decode(AudienceSize.self, url: client.connection.displayURL)
                return TableRenderer.fields([("audience_size", "\(size.audienceSize)"), ("sent", "no (dry run)")])
            }
            return
        }
        let response = try await client.send("POST", "/v3/push", body: bytes, .app)
        let accepted = try response.decode(PushAccepted.self, url: client.connection.displayURL)
        try output.emit(response) {
            let fields = [("msg_id", accepted.messageID)] + (accepted.cid.map { [("cid", $0)] } ?? [])
            return TableRenderer.fields(fields + accepted.warnings.map { ("warning", $0) })
        }
        if wait {
            let watcher = DeliveryWatcher(
                client: client,
                messageID: accepted.messageID,
                timeout: waitTimeout.map { .milliseconds(Int($0 * 1000)) },
                json: output.json,
                until: .routed
            )
            try await watcher.run()
        }
    }
}
