import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Logging
import PostgresNIO
import Prometheus
import Testing

/// A PostgreSQL whose processes are stopped (SIGSTOP): it refuses nothing and answers
/// nothing. Every route, a push among them, answers 503 with `Retry-After` once it has
/// waited `database.wait` (the live test client gives up after 20 s; before the fix a
/// push got no answer in 45 s), and what was accepted with 200 before is kept.
@Suite(.serialized)
struct FrozenDatabaseTests {
    @Test func everyRouteAnswers503WhilePostgreSQLIsFrozenAndNothingAcceptedIsLost() async throws {
        try await OwnDatabaseAPI.run("frozen") { api, _, directory in
            let processes = ClusterProcesses(dataDirectory: directory + "/data")
            let pushing = try await api.createApp("Pushing")
            // An app whose credentials the API has never looked up: its requests wait on
            // the database before their bodies are read.
            let cold = try await api.createApp("Cold")
            let device = try await api.registerDevice(pushing, platform: "android")
            let push = #"{"audience": {"registration_id": ["\#(device.registrationID)"]}, "message": {"msg_content": "m"}}"#
            let accepted = try await api.send(.post, "/v3/push", auth: pushing.auth, json: push)
            #expect(accepted.status == 200, "\(accepted.body)")
            let msgID = try accepted.string("msg_id")

            try processes.signal(SIGSTOP)
            do {
                let requests: [(String, HTTPRequest.Method, String, Auth, String?)] = [
                    ("a push", .post, "/v3/push", pushing.auth, push),
                    ("a read", .get, "/v3/devices/\(device.registrationID)", pushing.auth, nil),
                    ("an app's first request", .post, "/v3/push", cold.auth, push),
                    ("an admin write", .post, "/admin/v1/apps", .admin, #"{"name": "During"}"#),
                ]
                for (what, method, path, auth, body) in requests {
                    let reply = try await api.send(method, path, auth: auth, json: body)
                    #expect(reply.status == 503, "\(what): \(reply.body)")
                    #expect(reply.errorCode == HeraldError.Code.unavailable.rawValue, "\(what): \(reply.body)")
                    #expect(reply.headers[.retryAfter].flatMap(Int.init) ?? 0 > 0, "\(what)")
                }
            } catch {
                try? processes.signal(SIGCONT)
                throw error
            }
            try processes.signal(SIGCONT)

            // Back to normal without a restart, and the push accepted before is there.
            var last = Reply(status: 0, body: "", headers: [:])
            let deadline = ContinuousClock.now + .seconds(90)
            while ContinuousClock.now < deadline {
                last = try await api.send(.post, "/v3/push", auth: pushing.auth, json: push)
                if last.status == 200 { break }
                #expect(last.status == 503, "\(last.body)")
                try await Task.sleep(for: .milliseconds(500))
            }
            #expect(last.status == 200, "\(last.body)")
            let report = try await api.send(.get, "/v3/report/received?msg_ids=\(msgID)", auth: pushing.auth)
            #expect((try report.json["reports"] as? [Any])?.count == 1, "\(report.body)")
        }
    }
}

/// The processes of an embedded PostgreSQL cluster: its postmaster (from `postmaster.pid`)
/// and the postmaster's children, as they are when signalled.
struct ClusterProcesses {
    let dataDirectory: String

    func signal(_ signal: Int32) throws {
        let text = try String(contentsOfFile: dataDirectory + "/postmaster.pid", encoding: .utf8)
        guard let postmaster = text.split(separator: "\n").first.flatMap({ pid_t($0) }) else {
            throw ReplyError("no postmaster pid in \(dataDirectory)")
        }
        var pids = [postmaster]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8) else { continue }
            // pid (comm) state ppid ...: the command may hold spaces, so read after its ')'.
            let fields = stat[(stat.lastIndex(of: ")") ?? stat.startIndex)...].split(separator: " ")
            if fields.count > 2, pid_t(fields[2]) == postmaster { pids.append(pid) }
        }
        for pid in pids { kill(pid, signal) }
        if signal == SIGSTOP {
            // Should this test process die (or hang) meanwhile, the cluster runs again in
            // a minute rather than staying frozen for whoever runs next.
            let thaw = Process()
            thaw.executableURL = URL(fileURLWithPath: "/bin/sh")
            thaw.arguments = ["-c", "sleep 60; kill -CONT \(pids.map(String.init).joined(separator: " ")) 2>/dev/null"]
            try thaw.run()
        }
    }
}
