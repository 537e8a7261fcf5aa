import ArgumentParser
import Foundation
import HeraldKit
import Logging

/// `herald-device`: a device built on the SDK, for demos and manual tests. Registers once
/// (credentials kept in a file), connects, and prints every event it receives, then, on a
/// line starting with `iphone:`, what an iPhone would do with it (HeraldKit's
/// ``Arrivals``: show, remove, register, hand to the app).
@main
struct HeraldDevice: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "herald-device", abstract: "A Herald device on the command line.")

    @Option(help: "Herald's HTTP API.") var api = "http://127.0.0.1:8080"
    @Option(help: "The gateway host.") var host = "127.0.0.1"
    @Option(help: "The gateway's MQTT port.") var port = 1883
    @Option(help: "The app key.") var appKey: String
    @Option(help: "The platform to register as.") var platform = "linux"
    @Option(help: "Where the device keeps its credentials.") var state = ".herald-device.json"
    @Option(help: "Set this alias.") var alias: String?
    @Option(name: .customLong("tag"), help: "Add this tag (repeatable).") var tags: [String] = []
    @Option(help: "The device's IANA time zone, reported at registration (default: the system's).") var timeZone: String?
    @Option(help: "The device's BCP 47 language, reported at registration (default: the user's first preferred language).")
    var language: String?
    @Option(help: "Register as an iOS device with this APNs token (hex), so Herald reaches it through APNs while it is offline.")
    var apnsToken: String?
    @Option(
        help: """
            Carry out an APNs notification (its JSON as APNs delivered it; - reads standard input) as the app's \
            Notification Service Extension would, send the receipts, and exit.
            """
    )
    var apns: String?
    @Option(help: "Seconds to wait before sending receipts (spread over a random delay up to this).") var receiptSpread = 30

    func run() async throws {
        var logger = Logger(label: "herald-device")
        logger.logLevel = .notice
        guard let baseURL = URL(string: api) else { throw ValidationError("--api: not a URL") }
        let store = FileCredentialStore(path: state)
        let http = HeraldAPIClient(baseURL: baseURL, appKey: appKey)
        let credentials: DeviceCredentials
        if let saved = try store.load() {
            credentials = saved
        } else {
            credentials = try await http.register(
                platform: apnsToken == nil ? platform : "ios",
                apnsToken: apnsToken,
                apnsEnvironment: apnsToken == nil ? nil : "sandbox",
                timeZone: timeZone ?? TimeZone.current.identifier,
                language: language ?? Locale.preferredLanguages.first
            )
            try store.save(credentials)
        }
        FileHandle.standardOutput.write(Data("registration_id \(credentials.registrationID)\n".utf8))
        // What the app and its extension share (an App Group on iOS): the ledger of what
        // arrived, the receipts on their way, the categories kept.
        let arrivals = Arrivals(
            ledger: FileLedgerStore(url: URL(fileURLWithPath: state + ".ledger.json")),
            presenter: PrintingPresenter(),
            categories: CategoryStore(directory: URL(fileURLWithPath: state + ".categories")),
            receipts: ReceiptQueue(url: URL(fileURLWithPath: state + ".receipts.json")),
            logger: logger
        )
        let receipts = ReceiptSender(
            queue: arrivals.receipts!,
            api: http,
            credentials: credentials,
            spread: .seconds(receiptSpread),
            logger: logger
        )
        if let apns {
            try await receiveAPNs(apns, arrivals: arrivals, receipts: receipts)
            return
        }
        if let alias { try await http.setAlias(alias, credentials: credentials) }
        if !tags.isEmpty { try await http.updateTags(add: tags, credentials: credentials) }
        if let timeZone { try await http.setTimeZone(timeZone, credentials: credentials) }
        if let language { try await http.setLanguage(language, credentials: credentials) }

        let client = HeraldClient(
            configuration: .init(host: host, port: port, appKey: appKey),
            credentials: credentials,
            arrivals: arrivals,
            logger: logger
        )
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            group.addTask { await receipts.run() }
            for await event in client.events {
                FileHandle.standardOutput.write(Data((Self.describe(event) + "\n").utf8))
                if case .connected = event { receipts.nudge() }
            }
            group.cancelAll()
        }
    }

    /// An APNs notification, as the Notification Service Extension gets it: carried out
    /// (shown once, whichever copy came first), a `delivered` receipt queued, receipts sent.
    private func receiveAPNs(_ path: String, arrivals: Arrivals, receipts: ReceiptSender) async throws {
        let data = path == "-" ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: path))
        guard let userInfo = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw ValidationError("--apns: not a JSON object")
        }
        // The extension ran: the device got it, whatever it then shows.
        if let msgID = (userInfo["herald"] as? [String: Any])?["msg_id"] as? String {
            try arrivals.receipts?.add(Receipt(msgID: msgID, kind: .delivered))
        }
        for event in await arrivals.receive(apns: userInfo) {
            FileHandle.standardOutput.write(Data(("apns " + Self.describe(event) + "\n").utf8))
        }
        let sent = try await receipts.flush()
        FileHandle.standardOutput.write(Data("receipts sent \(sent)\n".utf8))
    }

    static func describe(_ event: HeraldEvent) -> String {
        switch event {
        case .connected: "connected"
        case .disconnected: "disconnected (reconnecting)"
        case .stopped(let refusal): "stopped: \(refusal)"
        case .categoryConfig(let config): "category \(config.identifier) version \(config.version)"
        case .notification(let n): "notification \(n.messageID) [\(n.identifier)] \(n.title.map { "\($0): " } ?? "")\(n.alert ?? "")"
        case .message(let m): "message \(m.messageID) \(m.content)"
        case .recall(let identifiers): "recall \(identifiers.joined(separator: ", "))"
        case .replace(let identifier, let n): "replace [\(identifier)] \(n.title.map { "\($0): " } ?? "")\(n.alert ?? "")"
        }
    }
}

/// What an iPhone's notification center would be asked to do, printed.
struct PrintingPresenter: Presenter {
    private func print(_ line: String) {
        FileHandle.standardOutput.write(Data(("iphone: " + line + "\n").utf8))
    }

    func show(_ notification: HeraldEvent.Notification, replacing: Bool) async {
        let text = [notification.title, notification.subtitle, notification.alert].compactMap { $0 }.joined(separator: " / ")
        var line = "\(replacing ? "re-post" : "show") [\(notification.identifier)] \(text)"
        if let badge = notification.badge { line += " badge \(badge)" }
        if let category = notification.category { line += " category \(category)" }
        if let config = notification.config {
            let tap = config.route(forAction: nil)
            line += "; a tap opens \(tap?.routerURL ?? tap?.toController ?? tap?.externalURL ?? "the app")"
            for action in config.actions {
                let route = config.route(forAction: action.identifier)
                line += "; action \(action.identifier) opens \(route?.routerURL ?? route?.toController ?? route?.externalURL ?? "the app")"
            }
        }
        print(line)
    }

    func remove(identifiers: [String]) async {
        print("remove \(identifiers.joined(separator: ", ")) (delivered and pending)")
    }

    func register(_ categories: [NotificationConfig]) async {
        for config in categories {
            print(
                "register category \(config.identifier) options \(config.options), \(config.actions.count) actions"
                    + (config.isPersistent ? ", kept across launches" : ", for this launch")
            )
        }
    }

    func deliver(_ message: HeraldEvent.Message) async {
        print("in-app message \(message.messageID) \(message.content)")
    }

    func setBadge(_ count: Int) async {
        print("badge \(count)")
    }
}
