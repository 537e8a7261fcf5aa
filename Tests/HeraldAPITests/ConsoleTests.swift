import CompressNIO
import Foundation
import HTTPTypes
import HeraldAPNs
import HeraldAPNsSandbox
import HeraldCenter
import HeraldCore
import HeraldFCM
import HeraldFCMSandbox
import HeraldTestSupport
import Logging
import NIOCore
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

/// The web console (issue #31), as route tests: every page well-formed with the console's
/// headers; signing in and out with a cookie; forms refused without their CSRF token or
/// from another site; a person sees only the apps they have a role on.
@Suite struct ConsoleTests {
    static let form: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]

    static func formEncoded(_ fields: [String: String]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return fields.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
    }

    /// Whether `html` is well-formed (balanced, every element closed): parsed as XML.
    static func isWellFormed(_ html: String) -> Bool {
        let parser = XMLParser(data: Data(html.utf8))
        return parser.parse()
    }

    /// The console's headers on a page.
    static func checkHeaders(_ reply: Reply, page: Bool = true) {
        let csp = reply.headers[.contentSecurityPolicy] ?? ""
        #expect(csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'") && !csp.contains("unsafe-inline"), "\(csp)")
        #expect(reply.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
        #expect(reply.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
        if page {
            #expect(reply.headers[.cacheControl] == "no-store")
            #expect(reply.headers[.contentType] == "text/html; charset=utf-8")
            #expect(isWellFormed(reply.body), "not well-formed: \(reply.body)")
            // No inline script, no inline handler: the policy would refuse them.
            #expect(!reply.body.contains("<script>") && !reply.body.contains(" onclick=") && !reply.body.contains("javascript:"))
        }
    }

    /// Signs in through the form; returns the session cookie (`herald_session=…`).
    static func signIn(
        _ api: APITest,
        _ email: String,
        password: String = PeopleTests.password,
        headers: HTTPFields = [:]
    ) async throws
        -> (reply: Reply, cookie: String?)
    {
        var fields = form
        fields.append(contentsOf: headers)
        let reply = try await api.send(.post, "/console/sign-in", json: formEncoded(["email": email, "password": password]), headers: fields)
        let cookie = reply.headers[.setCookie]?.split(separator: ";").first.map(String.init)
        return (reply, cookie)
    }

    static func csrf(in html: String) -> String? {
        guard let range = html.range(of: #"name="_csrf" value=""#) else { return nil }
        return String(html[range.upperBound...].prefix { $0 != "\"" })
    }

    @Test func aPersonSignsInSeesTheirAppsOnlyAndSignsOut() async throws {
        try await APITest.run { api in
            let mine = try await api.createApp("Mine & Yours")
            let theirs = try await api.createApp("Theirs")
            try await PeopleTests.user(api, "viewer@example.com", role: "viewer", on: mine)

            // Signed out: every page sends to sign in.
            let away = try await api.send(.get, "/console")
            #expect(away.status == 303 && away.headers[.location] == "/console/sign-in")
            let page = try await api.send(.get, "/console/sign-in")
            #expect(page.status == 200)
            Self.checkHeaders(page)
            #expect(page.body.contains(#"<label for="email">"#) && page.body.contains(#"<label for="password">"#))
            // Nothing absent shows as "nil" (no OpenID Connect provider here).
            #expect(!page.body.contains("nil") && !page.body.contains("Sign in with"), "\(page.body)")

            let (signedIn, cookie) = try await Self.signIn(api, "Viewer@Example.com")
            #expect(signedIn.status == 303 && signedIn.headers[.location] == "/console", "\(signedIn.body)")
            let setCookie = signedIn.headers[.setCookie] ?? ""
            #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict") && !setCookie.contains("Secure"), "\(setCookie)")
            let session = try #require(cookie)
            #expect(session.hasPrefix("herald_session=hks_"))

            let home = try await api.send(.get, "/console", headers: [.cookie: session])
            #expect(home.status == 200)
            Self.checkHeaders(home)
            #expect(home.body.contains("Mine &amp; Yours") && home.body.contains(mine.appKey) && !home.body.contains(theirs.appKey))
            let app = try await api.send(.get, "/console/apps/\(mine.appKey)", headers: [.cookie: session])
            #expect(app.status == 200 && app.body.contains("viewer"), "\(app.body)")
            Self.checkHeaders(app)
            // Another app: not found, as one that doesn't exist.
            let other = try await api.send(.get, "/console/apps/\(theirs.appKey)", headers: [.cookie: session])
            #expect(other.status == 404 && !other.body.contains("Theirs"))
            Self.checkHeaders(other)

            // The assets the pages name: served, cached for good; no other.
            let css = try #require(home.body.range(of: #"/console/assets/console\.[0-9a-f]{12}\.css"#, options: .regularExpression))
            let asset = try await api.send(.get, String(home.body[css]))
            #expect(asset.status == 200 && asset.headers[.cacheControl] == "public, max-age=31536000, immutable")
            #expect(asset.headers[.contentType] == "text/css; charset=utf-8")
            Self.checkHeaders(asset, page: false)
            #expect(try await api.send(.get, "/console/assets/console.000000000000.css").status == 404)
            // Gzipped for a browser that takes it: the same bytes once inflated.
            let gzipped = try await api.send(.get, String(home.body[css]), headers: [.acceptEncoding: "br, gzip;q=0.8"])
            #expect(gzipped.headers[.contentEncoding] == "gzip" && gzipped.headers[.vary] == "Accept-Encoding")
            #expect(try await api.send(.get, String(home.body[css]), headers: [.acceptEncoding: "gzip;q=0"]).headers[.contentEncoding] == nil)
            var compressed = ByteBuffer(string: "")
            compressed = try await api.client.execute(
                uri: String(home.body[css]),
                method: .get,
                headers: [.acceptEncoding: "gzip"],
                body: nil
            ).body
            let inflated = try compressed.decompress(with: .gzip())
            #expect(String(buffer: inflated) == asset.body && compressed.readableBytes < asset.body.utf8.count / 2)

            // Sign-out: a form with the session's CSRF token, from this site.
            let token = try #require(Self.csrf(in: home.body))
            var headers = Self.form
            headers[.cookie] = session
            let forged = try await api.send(.post, "/console/sign-out", json: "_csrf=0000", headers: headers)
            #expect(forged.status == 403)
            var crossSite = headers
            crossSite[HTTPField.Name("Origin")!] = "https://evil.example"
            crossSite[HTTPField.Name("Host")!] = "herald.example"
            #expect(try await api.send(.post, "/console/sign-out", json: "_csrf=\(token)", headers: crossSite).status == 403)
            #expect(try await api.send(.get, "/console", headers: [.cookie: session]).status == 200)  // still signed in
            let out = try await api.send(.post, "/console/sign-out", json: "_csrf=\(token)", headers: headers)
            #expect(out.status == 303 && out.headers[.setCookie]?.contains("Max-Age=0") == true)
            #expect(try await api.send(.get, "/console", headers: [.cookie: session]).headers[.location] == "/console/sign-in")

            // Signed in and out, in the audit log.
            let audit = try await api.send(.get, "/admin/v1/audit", auth: .admin)
            let lines = (try audit.json["entries"] as? [[String: Any]] ?? []).map {
                "\($0["actor"] ?? "") \($0["action"] ?? "") \($0["status"] ?? "")"
            }
            #expect(lines.contains("user:viewer@example.com POST /console/sign-in 303"), "\(lines)")
            #expect(lines.contains("user:viewer@example.com POST /console/sign-out 303"), "\(lines)")
        }
    }

    @Test func wrongPasswordsAreAnsweredAlikeThenThrottled() async throws {
        try await APITest.run { api in
            try await PeopleTests.user(api, "ops@example.com", instanceRole: "admin")
            let wrong = try await Self.signIn(api, "ops@example.com", password: "not it at all")
            let unknown = try await Self.signIn(api, "nobody@example.com", password: "not it at all")
            #expect(wrong.reply.status == 401 && unknown.reply.status == 401 && wrong.cookie == nil)
            #expect(wrong.reply.body.contains("Wrong email or password.") && unknown.reply.body.contains("Wrong email or password."))
            #expect(wrong.reply.body.contains(#"value="ops@example.com""#))  // kept in the form
            Self.checkHeaders(wrong.reply)
            var last = 0
            for attempt in 0..<10 { last = try await Self.signIn(api, "ops@example.com", password: "guess number \(attempt)").reply.status }
            #expect(last == 429)
            let locked = try await Self.signIn(api, "ops@example.com")
            #expect(locked.reply.status == 429 && locked.cookie == nil && locked.reply.body.contains("Too many failed sign-ins"))
            // Behind TLS (a proxy says so), the cookie is Secure.
            try await PeopleTests.user(api, "dev@example.com", instanceRole: "viewer")
            let secure = try await Self.signIn(api, "dev@example.com", headers: [HTTPField.Name("X-Forwarded-Proto")!: "https"])
            #expect(secure.reply.headers[.setCookie]?.contains("; Secure") == true)
            // A sign-in form from another site is refused.
            let crossSite = try await Self.signIn(
                api,
                "dev@example.com",
                headers: [HTTPField.Name("Origin")!: "https://evil.example", HTTPField.Name("Host")!: "herald.example"]
            )
            #expect(crossSite.reply.status == 403 && crossSite.cookie == nil)
        }
    }

    /// The composer: a preview shows the exact /v3/push body, its curl line and the
    /// audience's size; sending takes that size confirmed and goes through the API's
    /// acceptance (the audit, the two-person rule, the password before a push to all).
    @Test func theComposerPreviewsTheExactBodyAndSendsOnlyWhatWasConfirmed() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let one = try await api.registerDevice(app, apnsToken: randomAPNsToken())
            let two = try await api.registerDevice(app, apnsToken: randomAPNsToken())
            try await PeopleTests.user(api, "op@example.com", role: "operator", on: app)
            try await PeopleTests.user(api, "viewer@example.com", role: "viewer", on: app)
            try await PeopleTests.user(api, "author@example.com", role: "author", on: app)
            let session = try #require(try await Self.signIn(api, "op@example.com").cookie)
            let page = try await api.send(.get, "/console/apps/\(app.appKey)/compose", headers: [.cookie: session])
            #expect(page.status == 200, "\(page.body)")
            Self.checkHeaders(page)
            let csrf = try #require(Self.csrf(in: page.body))
            var headers = Self.form
            headers[.cookie] = session
            let ids = "\(one.registrationID), \(two.registrationID)"
            func submit(_ fields: [String: String], to path: String = "", as headers: HTTPFields) async throws -> Reply {
                try await api.send(.post, "/console/apps/\(app.appKey)/compose" + path, json: Self.formEncoded(fields), headers: headers)
            }
            var fields = [
                "_csrf": csrf, "audience_kind": "registration_id", "audience_values": ids, "platform": "all", "alert": "Hello <you>",
                "action": "preview",
            ]
            let preview = try await submit(fields, as: headers)
            #expect(preview.status == 200 && preview.body.contains("<strong>2</strong> devices"), "\(preview.body)")
            Self.checkHeaders(preview)
            #expect(
                preview.body.contains("&quot;alert&quot; : &quot;Hello &lt;you&gt;&quot;") && preview.body.contains("curl -X POST"),
                "\(preview.body)"
            )
            #expect(preview.body.contains("The APNs payload an iPhone gets") && preview.body.contains("&quot;aps&quot;"), "\(preview.body)")
            #expect(preview.body.contains(#"id="lock-body">Hello &lt;you&gt;<"#))
            // The script's live preview: the same facts as JSON, or why it isn't a push yet.
            let live = try await submit(fields, to: "/preview", as: headers)
            let liveJSON = try live.json
            #expect(live.status == 200 && liveJSON["audienceSize"] as? Int == 2, "\(live.body)")
            #expect((liveJSON["apnsBytes"] as? Int).map { $0 > 20 } == true, "\(live.body)")
            var unfinished = fields
            unfinished["audience_values"] = ""
            let why = try await submit(unfinished, to: "/preview", as: headers).json["error"] as? String
            #expect(why?.contains("audience") == true)
            unfinished["_csrf"] = "0"
            #expect(try await submit(unfinished, to: "/preview", as: headers).status == 403)
            // Nothing sent by a preview.
            let count = { try await api.store.sql.query("SELECT count(*) FROM messages").collect().first?.decode(Int.self) ?? -1 }
            #expect(try await count() == 0)
            // Sent only with the size shown: another size is looked at again.
            fields["action"] = "send"
            fields["confirmed_size"] = "5"
            let stale = try await submit(fields, as: headers)
            #expect(stale.status == 200 && stale.body.contains("The audience is now 2 devices"), "\(stale.body)")
            #expect(try await count() == 0)
            fields["confirmed_size"] = "2"
            let sent = try await submit(fields, as: headers)
            #expect(sent.status == 200 && sent.body.contains("Accepted as message"), "\(sent.body)")
            #expect(try await count() == 1)
            // The message holds exactly the body the preview showed.
            let stored = try await api.store.sql.query("SELECT request->'notification'->>'alert' FROM messages").collect().first?.decode(String.self)
            #expect(stored == "Hello <you>")
            // Audited under the person's name, in the push's commit.
            let audit = try await api.send(.get, "/v3/audit", auth: app.auth)
            #expect(audit.body.contains("user:op@example.com") && audit.body.contains("POST /console/apps/{app_key}/compose"), "\(audit.body)")

            // The other fields become the body's; a body written by hand is sent as written.
            var more = fields
            more.merge(
                [
                    "action": "preview", "category": "order", "message_content": "in-app", "spread_minutes": "30", "classification": "1",
                    "sms_content": "Your order shipped", "sms_delay": "600",
                ]
            ) { $1 }
            let extras = try await submit(more, as: headers)
            for part in [
                "&quot;category&quot; : &quot;order&quot;", "&quot;msg_content&quot; : &quot;in-app&quot;", "&quot;big_push_duration&quot; : 30",
                "&quot;classification&quot; : 1", "&quot;delay_time&quot; : 600",
            ] {
                #expect(extras.body.contains(part), "\(part): \(extras.body)")
            }
            more["spread_minutes"] = "soon"
            #expect(try await submit(more, as: headers).body.contains("options.big_push_duration"))
            let raw =
                #"{"platform": "all", "audience": {"registration_id": ["\#(one.registrationID)"]}, "notification": {"alert": "written by hand"}}"#
            var handWritten = fields
            handWritten["raw_body"] = raw
            let rawPreview = try await submit(handWritten, as: headers)
            #expect(rawPreview.body.contains("<strong>1</strong> devices") && rawPreview.body.contains("written by hand"), "\(rawPreview.body)")
            handWritten["raw_body"] = "{not json"
            #expect(try await submit(handWritten, as: headers).status == 400)

            // To every device, signed in long ago: the password first.
            try await api.store.sql.query("UPDATE user_sessions SET confirmed_at = now() - interval '1 hour'")
            var all = ["_csrf": csrf, "audience_kind": "all", "platform": "all", "alert": "Everyone", "action": "send", "confirmed_size": "2"]
            let asked = try await submit(all, as: headers)
            #expect(asked.status == 400 && asked.body.contains("needs your password"), "\(asked.body)")
            all["password"] = PeopleTests.password
            #expect(try await submit(all, as: headers).body.contains("Accepted as message"))
            #expect(try await count() == 2)

            // An author's push waits for approval; a viewer can't compose; bad input is said.
            let author = try #require(try await Self.signIn(api, "author@example.com").cookie)
            var authorHeaders = Self.form
            authorHeaders[.cookie] = author
            let authorPage = try await api.send(.get, "/console/apps/\(app.appKey)/compose", headers: [.cookie: author])
            fields["_csrf"] = try #require(Self.csrf(in: authorPage.body))
            let held = try await submit(fields, as: authorHeaders)
            #expect(held.body.contains("Kept as approval"), "\(held.body)")
            #expect(try await count() == 2)
            let viewer = try #require(try await Self.signIn(api, "viewer@example.com").cookie)
            #expect(try await api.send(.get, "/console/apps/\(app.appKey)/compose", headers: [.cookie: viewer]).status == 403)
            fields["audience_values"] = ""
            fields["action"] = "preview"
            let empty = try await submit(fields, as: authorHeaders)
            #expect(empty.status == 400 && empty.body.contains("role=\"alert\""), "\(empty.body)")
            // Without the form's token: refused.
            fields["_csrf"] = "0"
            #expect(try await submit(fields, as: authorHeaders).status == 403)
        }
    }

    /// Finding a device by what an on-call engineer has at hand, and its page: the facts,
    /// its latest copies, and the diagnosis `heraldctl doctor` gives; its token shortened.
    @Test func aDeviceIsFoundAndItsPageSaysWhyAPushMightNotReachIt() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let other = try await api.createApp("Other")
            let token = randomAPNsToken()
            let device = try await api.registerDevice(app, apnsToken: token)
            #expect(
                try await api.send(
                    .post,
                    "/v3/devices/\(device.registrationID)",
                    auth: app.auth,
                    json: #"{"alias": "carol", "tags": {"add": ["vip"]}}"#
                ).status == 200
            )
            let stranger = try await api.registerDevice(other, apnsToken: randomAPNsToken())
            try await PeopleTests.user(api, "viewer@example.com", role: "viewer", on: app)
            let session = try #require(try await Self.signIn(api, "viewer@example.com").cookie)

            for query in ["carol", "vip", device.registrationID, String(token.prefix(10)).uppercased()] {
                let found = try await api.send(.get, "/console/apps/\(app.appKey)/devices?q=\(query)", headers: [.cookie: session])
                #expect(found.status == 200 && found.body.contains(device.registrationID), "\(query): \(found.body)")
                Self.checkHeaders(found)
            }
            let none = try await api.send(.get, "/console/apps/\(app.appKey)/devices?q=\(stranger.registrationID)", headers: [.cookie: session])
            #expect(
                none.body.contains("No device of this app matches")
                    && !none.body.contains("href=\"/console/apps/\(app.appKey)/devices/\(stranger.registrationID)")
            )

            let page = try await api.send(.get, "/console/apps/\(app.appKey)/devices/\(device.registrationID)", headers: [.cookie: session])
            #expect(page.status == 200, "\(page.body)")
            Self.checkHeaders(page)
            #expect(page.body.contains("carol") && page.body.contains("vip") && page.body.contains("Why didn"))
            #expect(page.body.contains(String(token.prefix(8))) && !page.body.contains(token), "the whole token is shown")
            // The app has no APNs credentials: the diagnosis says so.
            #expect(page.body.contains("<li class=\"problem\">") || page.body.contains("<li class=\"warning\">"), "\(page.body)")
            // No center runs here: no copy was made, and the page says so as the diagnosis does.
            #expect(page.body.contains("no_copies") && page.body.contains("No message was sent to it yet"), "\(page.body)")
            // Another app's device, or one that isn't: not found.
            #expect(
                try await api.send(.get, "/console/apps/\(app.appKey)/devices/\(stranger.registrationID)", headers: [.cookie: session]).status == 404
            )
            #expect(try await api.send(.get, "/console/apps/\(other.appKey)/devices?q=x", headers: [.cookie: session]).status == 404)
        }
    }

    /// A device's tags edited in place and marked as a test device; the composer's "test
    /// devices only" names exactly those; the history finds messages by text, msg_id and
    /// source; a message's page shows its funnel and body, and recalls it.
    @Test func messagesAreSearchedAndRecalledAndTestDevicesGetTheTestPush() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let tester = try await api.registerDevice(app, apnsToken: randomAPNsToken())
            let other = try await api.registerDevice(app, apnsToken: randomAPNsToken())
            try await PeopleTests.user(api, "op@example.com", role: "operator", on: app)
            try await PeopleTests.user(api, "viewer@example.com", role: "viewer", on: app)
            let session = try #require(try await Self.signIn(api, "op@example.com").cookie)
            var headers = Self.form
            headers[.cookie] = session
            let devicePath = "/console/apps/\(app.appKey)/devices/\(tester.registrationID)"
            let page = try await api.send(.get, devicePath, headers: [.cookie: session])
            let csrf = try #require(Self.csrf(in: page.body))
            func post(_ path: String, _ fields: [String: String], as headers: HTTPFields) async throws -> Reply {
                try await api.send(.post, path, json: Self.formEncoded(fields), headers: headers)
            }

            // Tags, in place.
            #expect(try await post(devicePath + "/tags", ["_csrf": csrf, "add": "beta, gamma"], as: headers).status == 303)
            #expect(try await post(devicePath + "/tags", ["_csrf": csrf, "remove": "beta"], as: headers).status == 303)
            #expect(try await post(devicePath + "/tags", ["_csrf": csrf, "add": String(repeating: "x", count: 500)], as: headers).status == 400)
            #expect(try await post(devicePath + "/tags", ["_csrf": "0", "add": "delta"], as: headers).status == 403)
            let tags = try await api.send(.get, "/v3/devices/\(tester.registrationID)", auth: app.auth)
            #expect((try tags.json["tags"] as? [String])?.sorted() == ["gamma"], "\(tags.body)")
            // A test device.
            #expect(try await post(devicePath + "/test", ["_csrf": csrf, "test": "1"], as: headers).status == 303)
            let marked = try await api.send(.get, devicePath, headers: [.cookie: session])
            Self.checkHeaders(marked)
            #expect(marked.body.contains("No longer a test device") && marked.body.contains("gamma"), "\(marked.body)")
            // A viewer changes nothing.
            let viewer = try #require(try await Self.signIn(api, "viewer@example.com").cookie)
            var viewerHeaders = Self.form
            viewerHeaders[.cookie] = viewer
            let viewerPage = try await api.send(.get, devicePath, headers: [.cookie: viewer])
            #expect(!viewerPage.body.contains("Make it a test device") && !viewerPage.body.contains("Add tags"))
            let viewerCSRF = try #require(Self.csrf(in: viewerPage.body))
            #expect(try await post(devicePath + "/test", ["_csrf": viewerCSRF, "test": "0"], as: viewerHeaders).status == 403)

            // The composer's test mode names the test devices, and only them.
            let compose = "/console/apps/\(app.appKey)/compose"
            var fields = ["_csrf": csrf, "audience_kind": "test", "platform": "all", "alert": "Only testers", "action": "preview"]
            let preview = try await post(compose, fields, as: headers)
            #expect(preview.body.contains(tester.registrationID) && !preview.body.contains(other.registrationID), "\(preview.body)")
            #expect(preview.body.contains("<strong>1</strong> devices"))
            fields["action"] = "send"
            fields["confirmed_size"] = "1"
            let sent = try await post(compose, fields, as: headers)
            let consoleID = try #require(
                sent.body.range(of: #"messages/[0-9]+"#, options: .regularExpression).map { String(sent.body[$0].dropFirst(9)) }
            )
            let fromAPI = try await api.send(
                .post,
                "/v3/push",
                auth: app.auth,
                json: #"{"platform": "all", "audience": "all", "notification": {"alert": "From the API"}}"#
            )
            let apiID = try #require(try fromAPI.json["msg_id"] as? String)

            // The history: by text, by msg_id, by source, by day.
            let history = "/console/apps/\(app.appKey)/messages"
            func found(_ query: String) async throws -> String {
                let reply = try await api.send(.get, history + query, headers: [.cookie: session])
                #expect(reply.status == 200)
                Self.checkHeaders(reply)
                return reply.body
            }
            let all = try await found("")
            #expect(all.contains(consoleID) && all.contains(apiID))
            let byText = try await found("?q=testers")
            #expect(byText.contains(consoleID) && !byText.contains(apiID))
            let bySource = try await found("?source=api")
            #expect(bySource.contains(apiID) && !bySource.contains(consoleID))
            #expect(try await found("?source=console").contains(consoleID))
            let byID = try await found("?msg_id=\(apiID)")
            #expect(byID.contains(apiID) && !byID.contains(consoleID))
            #expect(try await found("?day=1999-01-01").contains("No message matches"))
            #expect(try await found("?day=yesterday").contains("role=\"alert\""))
            // Wildcards are taken as text.
            #expect(try await found("?q=%25").contains("No message matches"))

            // A message's page: funnel, body, recall.
            let messagePath = history + "/\(consoleID)"
            let message = try await api.send(.get, messagePath, headers: [.cookie: session])
            #expect(message.status == 200, "\(message.body)")
            Self.checkHeaders(message)
            // No center runs here: nothing is targeted yet (the browser check watches a delivery).
            #expect(message.body.contains("data-key=\"targeted\">0<") && message.body.contains("Acknowledged over MQTT"), "\(message.body)")
            #expect(message.body.contains("Only testers") && message.body.contains("data-live=\"\(messagePath)/funnel\""))
            #expect(message.body.contains("from console") && message.body.contains(">Recall<") && message.body.contains("compose?replace="))
            #expect(!message.body.contains("<dt>Recalled</dt>") && !message.body.contains(">nil<"), "\(message.body)")
            #expect(try await api.send(.get, history + "/\(apiID)", headers: [.cookie: viewer]).body.contains(">Recall<") == false)
            #expect(try await post(messagePath + "/recall", ["_csrf": viewerCSRF], as: viewerHeaders).status == 403)
            #expect(try await post(messagePath + "/recall", ["_csrf": "0"], as: headers).status == 403)
            #expect(try await post(messagePath + "/recall", ["_csrf": csrf], as: headers).status == 303)
            let recalled = try await api.send(.get, messagePath, headers: [.cookie: session])
            #expect(recalled.body.contains("<dt>Recalled</dt>") && !recalled.body.contains(">Recall<"), "\(recalled.body)")
            #expect(try await found("").contains("recalled</span>"))
            #expect(try await api.send(.get, history + "/0123", headers: [.cookie: session]).status == 404)
            // "Replace…" opens the composer with the identifier to replace.
            let replace = try await api.send(.get, compose + "?replace=news", headers: [.cookie: session])
            #expect(replace.body.contains(#"name="replace" value="news""#))
        }
    }

    /// Apps made, set up and deleted: the master secret shown once; settings validated as
    /// the API does; APNs credentials checked and then tried against a real APNs sandbox
    /// (one that knows only the keys registered with it, as Apple does) before they are
    /// saved; deleting takes the password and the name again. Instance admins only.
    @Test func anAdminCreatesSetsUpAndDeletesAnApp() async throws {
        let sandbox = try await APNsSandbox.start(configuration: .init(transport: .plaintext))
        let target = APNsRouting.SandboxTarget(host: "127.0.0.1", port: sandbox.port, transport: .plaintext) { _ in }
        let dryRun = APNsDryRun(routing: .sandbox(target))
        // FCM: a sandbox that knows only the service accounts admitted to it, as Google does.
        let fcmSandbox = try await FCMSandbox.start()
        let fcmClient = FCMClient(
            endpoints: .init(sendBase: fcmSandbox.baseURL, tokenURL: fcmSandbox.tokenURL, trustedCertificatePEMs: [fcmSandbox.certificatePEM]),
            logger: Logger(label: "test")
        )
        defer {
            Task {
                try? await fcmClient.shutdown()
                await fcmSandbox.shutdown()
            }
        }
        let fcmCheck: @Sendable (FCMServiceAccount) async -> String? = { account in
            do {
                _ = try await fcmClient.accessToken(for: account, askingAgain: true)
                return nil
            } catch FCMCredentialError.refused(let reason) {
                return reason
            } catch {
                return nil
            }
        }
        do {
            let check: @Sendable (APNsCredentials) async -> String? = { await dryRun.refusal(of: $0) }
            try await APITest.run(apnsCheck: check, fcmCheck: fcmCheck) { api in
                try await PeopleTests.user(api, "admin@example.com", instanceRole: "admin")
                try await PeopleTests.user(api, "viewer@example.com", instanceRole: "viewer")
                let session = try #require(try await Self.signIn(api, "admin@example.com").cookie)
                var headers = Self.form
                headers[.cookie] = session
                let home = try await api.send(.get, "/console", headers: [.cookie: session])
                #expect(home.body.contains("href=\"/console/apps/new\""))
                let newPage = try await api.send(.get, "/console/apps/new", headers: [.cookie: session])
                Self.checkHeaders(newPage)
                let csrf = try #require(Self.csrf(in: newPage.body))
                func post(_ path: String, _ fields: [String: String], as headers: HTTPFields = headers) async throws -> Reply {
                    try await api.send(.post, path, json: Self.formEncoded(fields), headers: headers)
                }

                // Created: the secret shown once, and it works.
                #expect(try await post("/console/apps", ["_csrf": csrf, "name": ""]).status == 400)
                let created = try await post("/console/apps", ["_csrf": csrf, "name": "Shop <1>"])
                #expect(created.status == 200, "\(created.body)")
                Self.checkHeaders(created)
                let appKey = try #require(
                    created.body.range(of: #"id="app-key">[0-9a-f]+"#, options: .regularExpression).map { String(created.body[$0].dropFirst(13)) }
                )
                let secret = try #require(
                    created.body.range(of: #"id="master-secret">[0-9a-f]+"#, options: .regularExpression).map {
                        String(created.body[$0].dropFirst(19))
                    }
                )
                let app = TestApp(appKey: appKey, masterSecret: secret)
                #expect(created.body.contains("Shop &lt;1&gt;"))
                #expect(try await api.send(.get, "/v3/tags", auth: app.auth).status == 200)
                let settingsPath = "/console/apps/\(appKey)/settings"
                let settings = try await api.send(.get, settingsPath, headers: [.cookie: session])
                #expect(settings.status == 200 && !settings.body.contains(secret), "the secret is shown again")
                Self.checkHeaders(settings)

                // Settings: validated as the API does; saved.
                let bad = try await post(
                    settingsPath,
                    ["_csrf": csrf, "time_zone": "Mars/Base", "rate_limit_per_minute": "", "daily_cap": "", "quiet_start": "", "quiet_end": ""]
                )
                #expect(bad.status == 400 && bad.body.contains("role=\"alert\""), "\(bad.body)")
                let badCap = try await post(settingsPath, ["_csrf": csrf, "time_zone": "UTC", "daily_cap": "many"])
                #expect(badCap.status == 400 && badCap.body.contains("daily_cap"))
                let saved = try await post(
                    settingsPath,
                    [
                        "_csrf": csrf, "time_zone": "Asia/Shanghai", "rate_limit_per_minute": "600", "daily_cap": "3", "quiet_start": "22:00",
                        "quiet_end": "08:00", "quiet_action": "drop",
                    ]
                )
                #expect(saved.status == 303, "\(saved.body)")
                let stored = try await api.send(.get, "/admin/v1/apps/\(appKey)", auth: .admin)
                #expect(
                    stored.body.contains("Asia/Shanghai") && stored.body.contains("\"daily_cap\":3") && stored.body.contains("drop"),
                    "\(stored.body)"
                )

                // APNs: a key that isn't one, refused next to the field; nothing stored.
                let apnsPath = "/console/apps/\(appKey)/apns"
                var apns = [
                    "_csrf": csrf, "type": "token", "bundle_id": "com.example.shop", "environment": "sandbox", "key_id": "ABC123DEFG",
                    "team_id": "TEAM123456", "private_key": "not a key",
                ]
                let notAKey = try await post(apnsPath, apns)
                #expect(notAKey.status == 400 && notAKey.body.contains("id=\"apns-error\"") && notAKey.body.contains("P-256"), "\(notAKey.body)")
                // A real key APNs doesn't know: refused by the dry run; nothing stored.
                apns["private_key"] = TestCredentials.p8()
                let unknown = try await post(apnsPath, apns)
                #expect(unknown.status == 400 && unknown.body.contains("InvalidProviderToken"), "\(unknown.body)")
                #expect(try await api.send(.get, "/admin/v1/apps/\(appKey)/apns", auth: .admin).status == 404)
                // A key it knows: saved.
                let p8 = TestCredentials.p8()
                try sandbox.registerSigningKey(keyID: "ABC123DEFG", teamID: "TEAM123456", privateKeyPEM: p8)
                apns["private_key"] = p8
                #expect(try await post(apnsPath, apns).status == 303)
                let apnsState = try await api.send(.get, settingsPath, headers: [.cookie: session])
                #expect(apnsState.body.contains("ok: token key ABC123DEFG") && !apnsState.body.contains("PRIVATE KEY"), "\(apnsState.body)")
                // Replacing them asks for the password.
                let unconfirmed = try await post(apnsPath, apns)
                #expect(unconfirmed.status == 403 && unconfirmed.body.contains("password again"), "\(unconfirmed.body)")

                // FCM: a key file checked as the API checks it, then tried at its token
                // endpoint; saved only when both hold, and never shown again.
                #expect(apnsState.body.contains("FCM service account") && apnsState.body.contains("not set"))
                let fcmPath = "/console/apps/\(appKey)/fcm"
                let garbage = try await post(fcmPath, ["_csrf": csrf, "service_account": "not a key file"])
                #expect(
                    garbage.status == 400 && garbage.body.contains("id=\"fcm-error\"") && garbage.body.contains("not a JSON object"),
                    "\(garbage.body)"
                )
                let (keyFile, account) = try FCMSandbox.keyFile(project: "shop-a")
                let keyText = String(decoding: keyFile, as: UTF8.self)
                let otherProject = try await post(fcmPath, ["_csrf": csrf, "service_account": keyText, "project_id": "shop-b"])
                #expect(otherProject.status == 400 && otherProject.body.contains("not &quot;shop-b&quot;"), "\(otherProject.body)")
                let unknownAccount = try await post(fcmPath, ["_csrf": csrf, "service_account": keyText, "project_id": "shop-a"])
                #expect(unknownAccount.status == 400 && unknownAccount.body.contains("token endpoint refused"), "\(unknownAccount.body)")
                #expect(try await api.send(.get, "/admin/v1/apps/\(appKey)/fcm", auth: .admin).status == 404)
                try fcmSandbox.admit(account)
                #expect(try await post(fcmPath, ["_csrf": csrf, "service_account": keyText, "project_id": "shop-a"]).status == 303)
                let fcmState = try await api.send(.get, settingsPath, headers: [.cookie: session])
                #expect(fcmState.body.contains("ok: \(account.clientEmail), project shop-a") && !fcmState.body.contains("BEGIN PRIVATE KEY"))
                let fcmUnconfirmed = try await post(fcmPath, ["_csrf": csrf, "service_account": keyText])
                #expect(fcmUnconfirmed.status == 403 && fcmUnconfirmed.body.contains("password again"), "\(fcmUnconfirmed.body)")

                // A viewer neither creates nor sets up.
                let viewer = try #require(try await Self.signIn(api, "viewer@example.com").cookie)
                var viewerHeaders = Self.form
                viewerHeaders[.cookie] = viewer
                let viewerHome = try await api.send(.get, "/console", headers: [.cookie: viewer])
                let viewerCSRF = try #require(Self.csrf(in: viewerHome.body))
                #expect(!viewerHome.body.contains("/console/apps/new"))
                #expect(try await api.send(.get, "/console/apps/new", headers: [.cookie: viewer]).status == 403)
                #expect(try await post("/console/apps", ["_csrf": viewerCSRF, "name": "Mine"], as: viewerHeaders).status == 403)
                #expect(try await api.send(.get, settingsPath, headers: [.cookie: viewer]).status == 404)

                // Deleting: the password and the name, else nothing happens.
                let deletePath = "/console/apps/\(appKey)/delete"
                #expect(try await post(deletePath, ["_csrf": csrf, "confirm_name": "Shop <1>"]).status == 403)
                #expect(try await post(deletePath, ["_csrf": csrf, "confirm_name": "Shop <1>", "password": "wrong one"]).status == 401)
                #expect(try await post(deletePath, ["_csrf": csrf, "confirm_name": "Shop", "password": PeopleTests.password]).status == 400)
                #expect(try await post(deletePath, ["_csrf": "0", "confirm_name": "Shop <1>", "password": PeopleTests.password]).status == 403)
                #expect(try await api.send(.get, "/admin/v1/apps/\(appKey)", auth: .admin).status == 200)
                let deleted = try await post(deletePath, ["_csrf": csrf, "confirm_name": "Shop <1>", "password": PeopleTests.password])
                #expect(deleted.status == 303 && deleted.headers[.location] == "/console")
                #expect(try await api.send(.get, "/admin/v1/apps/\(appKey)", auth: .admin).status == 404)
            }
        } catch {
            await sandbox.shutdown()
            throw error
        }
        await sandbox.shutdown()
    }

    /// The dashboard: every node's state and its last hour from the samples the nodes record
    /// (fixtures here; `NodeFiguresTests` reads a real registry), drawn as SVG; for people
    /// with a role on the instance.
    @Test func theDashboardDrawsEveryNodesLastHour() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            try await PeopleTests.user(api, "ops@example.com", instanceRole: "viewer")
            try await PeopleTests.user(api, "dev@example.com", role: "admin", on: app)
            try await api.store.sql.query(
                """
                INSERT INTO nodes (node_id, heartbeat_at, draining_at) VALUES
                    ('node-a', now(), NULL), ('node-b', now(), now()), ('node-c', now() - interval '40 seconds', NULL)
                """
            )
            // node-a: 100 connected, then 120; 600 accepted in 60 s (10/s); node-gone: only samples.
            try await api.store.sql.query(
                """
                INSERT INTO node_samples (node_id, at, connected, accepted, delivered_tcp, delivered_apns, apns_ok, apns_failed) VALUES
                    ('node-a', now() - interval '70 seconds', 100, 1000, 500, 100, 100, 0),
                    ('node-a', now() - interval '10 seconds', 120, 1600, 1100, 160, 150, 10),
                    ('node-gone', now() - interval '20 minutes', 7, 5, 5, 0, 0, 0),
                    ('node-gone', now() - interval '19 minutes', 7, 10, 9, 0, 0, 0)
                """
            )
            let session = try #require(try await Self.signIn(api, "ops@example.com").cookie)
            let page = try await api.send(.get, "/console/dashboard", headers: [.cookie: session])
            #expect(page.status == 200, "\(page.body)")
            Self.checkHeaders(page)
            let body = page.body
            #expect(body.contains("<polyline points=") && body.contains("node-a: 120") && body.contains("node-a: 10"), "\(body)")
            #expect(body.contains("node-a: 0.2"), "the APNs failures: 10 in 60 s")
            #expect(body.contains(">live<") && body.contains(">draining<") && body.contains("not answering (last heartbeat"))
            #expect(body.contains("gone (last figures"))
            #expect(body.contains("data-refresh="))
            // Someone with a role on an app only: not the instance's figures.
            let dev = try #require(try await Self.signIn(api, "dev@example.com").cookie)
            #expect(try await api.send(.get, "/console/dashboard", headers: [.cookie: dev]).status == 403)
            #expect(!(try await api.send(.get, "/console", headers: [.cookie: dev]).body.contains("/console/dashboard")))
        }
    }

    /// Schedules: listed, paused and resumed, edited as the API's body (its errors shown);
    /// operators only.
    @Test func schedulesAreListedPausedAndEdited() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            _ = try await api.registerDevice(app, apnsToken: randomAPNsToken())
            let created = try await api.send(.post, "/v3/schedules", auth: app.auth, json: ScheduleAPITests.single("nightly_news"))
            #expect(created.status == 200, "\(created.body)")
            let scheduleID = try #require(try created.json["schedule_id"] as? String)
            try await PeopleTests.user(api, "op@example.com", role: "operator", on: app)
            try await PeopleTests.user(api, "viewer@example.com", role: "viewer", on: app)
            let session = try #require(try await Self.signIn(api, "op@example.com").cookie)
            var headers = Self.form
            headers[.cookie] = session
            let listPath = "/console/apps/\(app.appKey)/schedules"
            let list = try await api.send(.get, listPath, headers: [.cookie: session])
            #expect(list.status == 200 && list.body.contains("nightly_news") && list.body.contains(">active<"), "\(list.body)")
            Self.checkHeaders(list)
            let csrf = try #require(Self.csrf(in: list.body))
            func post(_ path: String, _ fields: [String: String]) async throws -> Reply {
                try await api.send(.post, path, json: Self.formEncoded(fields), headers: headers)
            }
            func stored() async throws -> [String: Any] {
                try await api.send(.get, "/v3/schedules/\(scheduleID)", auth: app.auth).json
            }
            #expect(try await post(listPath + "/\(scheduleID)/pause", ["_csrf": csrf, "enabled": "0"]).status == 303)
            #expect(try await stored()["enabled"] as? Bool == false)
            #expect(try await api.send(.get, listPath, headers: [.cookie: session]).body.contains(">Resume<"))
            #expect(try await post(listPath + "/\(scheduleID)/pause", ["_csrf": csrf, "enabled": "1"]).status == 303)
            #expect(try await stored()["enabled"] as? Bool == true)

            // The editor shows the body PUT takes; a bad one is refused with the API's words.
            let editPath = listPath + "/\(scheduleID)"
            let editor = try await api.send(.get, editPath, headers: [.cookie: session])
            #expect(editor.status == 200 && editor.body.contains("&quot;trigger&quot;") && !editor.body.contains("next_fire_at"), "\(editor.body)")
            Self.checkHeaders(editor)
            let bad = try await post(editPath, ["_csrf": csrf, "body": #"{"name": "x", "trigger": {"single": {"time": "yesterday"}}}"#])
            #expect(bad.status == 400 && bad.body.contains("trigger"), "\(bad.body)")
            #expect(try await stored()["name"] as? String == "nightly_news")
            let renamed = try await post(
                editPath,
                [
                    "_csrf": csrf,
                    "body": #"{"name": "weekly", "push": {"platform": "all", "audience": "all", "notification": {"alert": "new text"}}}"#,
                ]
            )
            #expect(renamed.status == 303, "\(renamed.body)")
            let after = try await stored()
            #expect(after["name"] as? String == "weekly" && (after["push"] as? [String: Any]).map { "\($0)" }?.contains("new text") == true)

            // A viewer sees no schedule; a forged form changes nothing.
            let viewer = try #require(try await Self.signIn(api, "viewer@example.com").cookie)
            #expect(try await api.send(.get, listPath, headers: [.cookie: viewer]).status == 403)
            #expect(try await post(listPath + "/\(scheduleID)/pause", ["_csrf": "0", "enabled": "0"]).status == 403)
            #expect(try await stored()["enabled"] as? Bool == true)
        }
    }
}
