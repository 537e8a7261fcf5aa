import Foundation
import HeraldCore
import NIOCore
import PostgresNIO

/// The statement of ``APIStore/acceptPushes(_:fanningOutTo:)``, prepared once per connection:
/// it is the hottest statement of the push path, and planning it took longer than running
/// it for a group commit of a few pushes. Its plan reaches every table through an index
/// (devices by app and registration id or alias, or by id); PostgreSQL plans it again when
/// ANALYZE changes a table's statistics. (The record statement of the center stays
/// unprepared: its generic plan, made while the tables were small, scanned them whole.)
///
/// With peer routing on (`$17`, the peers' liveness bound, above 0), a copy whose device
/// another live node holds is routed to that node here (`node_routes`, hop 1), as
/// ``CenterStore/routeToHolders(_:except:deadAfter:hops:)`` would after the commit, when
/// the route planner lets the copy travel (``RoutePlanner/mayTravelOverConnection(_:inBackground:)``,
/// answered per push for a device in the background and one not): a notification for a
/// device in the background stays, for APNs from here.
struct AcceptPushesStatement: PostgresPreparedStatement {
    /// The push's index (from 1), its message's row id, its job's id, a copy's target (nil
    /// for a push not fanned out here, or fanned out to no device), and the node the copy
    /// was routed to (nil for a copy this node routes).
    typealias Row = (index: Int64, messageID: Int64, jobID: Int64, target: FanOutTarget?, routedTo: String?)

    static let sql = """
        WITH input AS (
            SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[],
                                 $4::text[], $5::integer[],
                                 $6::timestamptz[], $7::timestamptz[], $8::boolean[],
                                 $9::boolean[], $10::boolean[], $11::bytea[], $18::boolean[], $19::text[], $20::text[], $21::bytea[],
                                 $22::boolean[], $23::text[], $24::text[], $25::text[], $26::boolean[])
                WITH ORDINALITY AS v(msg_id, app_id, request, identifier, ttl, expires_at, created_at, checked, fans_out, inboxed,
                                     payload, travels_bg, cid, platforms, android_payload, events, callback, audit, source, travels_fg, idx)
        ), apps AS (
            -- Once per app, what a foreign key did per message (migration 0007): an app
            -- deleted meanwhile stores nothing, and none is deleted before this commits.
            SELECT a.id FROM apps a WHERE a.id IN (SELECT app_id FROM input) FOR KEY SHARE
        ), wanted AS (
            SELECT * FROM unnest($12::bigint[], $13::text[], $14::text[]) AS w(idx, rid, alias)
        ), targets AS (
            SELECT w.idx, d.id AS device_id FROM wanted w JOIN input i ON i.idx = w.idx
                JOIN devices d ON d.app_id = i.app_id AND d.registration_id = NULLIF(w.rid, '')
            WHERE i.platforms = '' OR d.platform = ANY(string_to_array(i.platforms, ','))
            UNION
            SELECT w.idx, d.id FROM wanted w JOIN input i ON i.idx = w.idx
                JOIN devices d ON d.app_id = i.app_id AND d.alias = NULLIF(w.alias, '')
            WHERE i.platforms = '' OR d.platform = ANY(string_to_array(i.platforms, ','))
        ), m AS (
            INSERT INTO messages (msg_id, app_id, request, identifier, time_to_live, expires_at, created_at, fanned_out_at, events, source)
            SELECT i.msg_id, i.app_id, i.request::json, i.identifier, i.ttl, i.expires_at, i.created_at,
                   CASE WHEN i.fans_out THEN now() END, i.events, NULLIF(i.source, '')
            FROM input i WHERE i.cid = '' AND i.app_id IN (SELECT id FROM apps) AND (i.checked OR i.idx IN (SELECT idx FROM targets))
            ORDER BY i.idx
            RETURNING id, msg_id
        ), mc AS (
            -- Pushes with a cid ('' for none; batch single push): one whose cid another commit stored
            -- meanwhile is not stored, and its caller reads that push back. Apart, so the
            -- pushes without one don't pay for the conflict check.
            INSERT INTO messages (msg_id, app_id, cid, request, identifier, time_to_live, expires_at, created_at, fanned_out_at, events, source)
            SELECT i.msg_id, i.app_id, i.cid, i.request::json, i.identifier, i.ttl, i.expires_at, i.created_at,
                   CASE WHEN i.fans_out THEN now() END, i.events, NULLIF(i.source, '')
            FROM input i WHERE i.cid <> '' AND i.app_id IN (SELECT id FROM apps) AND (i.checked OR i.idx IN (SELECT idx FROM targets))
            ORDER BY i.idx
            ON CONFLICT (app_id, cid) WHERE cid IS NOT NULL DO NOTHING
            RETURNING id, msg_id
        ), stored AS (
            SELECT i.idx, m.id, i.msg_id, i.fans_out, i.inboxed, i.payload, i.android_payload, i.expires_at
            FROM (SELECT * FROM m UNION ALL SELECT * FROM mc) AS m JOIN input i ON i.msg_id = m.msg_id
        ), j AS (
            INSERT INTO push_jobs (message_id, kind, cursor_device, leased_until, leased_by, attempts)
            SELECT s.id, 'push', CASE WHEN s.fans_out THEN 9223372036854775807 ELSE 0 END,
                   CASE WHEN s.fans_out THEN now() + make_interval(secs => $15::double precision) END,
                   CASE WHEN s.fans_out THEN $16::text END, CASE WHEN s.fans_out THEN 1 ELSE 0 END
            FROM stored s ORDER BY s.id
            RETURNING id, message_id, leased_by IS NULL AS queued
        ), accepted_events AS (
            -- Only pushes whose app records events, or that have a callback (migration 0018).
            INSERT INTO events (app_id, type, message_id, msg_id)
            SELECT i.app_id, 'accepted', s.id, s.msg_id FROM stored s JOIN input i ON i.idx = s.idx WHERE i.events ORDER BY s.idx
        ), callbacks AS (
            INSERT INTO message_callbacks (message_id, app_id, url, params, type)
            SELECT s.id, i.app_id, c.url, c.params, c.type FROM stored s JOIN input i ON i.idx = s.idx
                CROSS JOIN LATERAL json_to_record(i.callback::json) AS c(url text, params json, type integer)
            WHERE i.callback <> ''
        ), audited AS (
            -- The request's audit entry, in the push's commit (migration 0036).
            INSERT INTO audit_pending (at_us, app_id, actor, action, target, status, address, request_id, body_digest)
            SELECT a.at_us, i.app_id, a.actor, a.action, a.target, a.status, a.address, a.request_id, a.body_digest
            FROM stored s JOIN input i ON i.idx = s.idx
                CROSS JOIN LATERAL json_to_record(i.audit::json)
                    AS a(at_us bigint, actor text, action text, target text, status integer, address text, request_id text, body_digest text)
            WHERE i.audit <> '' ORDER BY s.idx
        ), notified AS (
            SELECT pg_notify('herald_jobs', count(*)::text) FROM j WHERE j.queued HAVING count(*) > 0
        ), copies AS (
            SELECT s.idx AS k, t.device_id, s.inboxed AS stored FROM stored s JOIN targets t ON t.idx = s.idx WHERE s.fans_out
        ), contents AS (
            SELECT s.idx AS k, s.msg_id, s.payload, s.android_payload, s.expires_at FROM stored s WHERE s.fans_out AND s.inboxed
        ), \(InboxCopies.ctes), delivered AS (
            INSERT INTO deliveries (message_id, device_id, inbox_seq)
            SELECT s.id, n.device_id, n.seq FROM numbered n JOIN stored s ON s.idx = n.k
        ), held AS (
            SELECT n.k, n.device_id, se.node_id FROM numbered n
                JOIN input i ON i.idx = n.k
                JOIN devices d ON d.id = n.device_id
                JOIN device_sessions se ON se.device_id = n.device_id
                JOIN nodes nd ON nd.node_id = se.node_id
            WHERE $17::double precision > 0
              AND \(LiveHolders.condition(session: "se", node: "nd", except: "$16::text", deadAfter: "$17::double precision"))
              -- The route planner's rule, answered in Swift for both states of the device.
              AND CASE WHEN d.in_background THEN i.travels_bg ELSE i.travels_fg END
        ), routed AS (
            INSERT INTO node_routes (node_id, message_id, device_ids, hops)
            SELECT h.node_id, s.id, array_agg(h.device_id ORDER BY h.device_id), 1
            FROM held h JOIN stored s ON s.idx = h.k GROUP BY h.node_id, s.id
        )
        SELECT s.idx, s.id, j.id, \(FanOutTarget.columns), n.seq, NULL::integer, h.node_id
        FROM stored s JOIN j ON j.message_id = s.id LEFT JOIN numbered n ON n.k = s.idx
             LEFT JOIN devices d ON d.id = n.device_id
             LEFT JOIN held h ON h.k = n.k AND h.device_id = n.device_id
             CROSS JOIN (SELECT count(*) FROM notified) AS notify
        ORDER BY s.idx, d.id
        """

    var pushes: [PendingPush]
    var wanted: ExplicitAudienceRows
    var checked: [Bool]
    var fansOut: [Bool]
    var inboxed: [Bool]
    var payloads: [ByteBuffer]
    /// What Android devices' copies hold, empty when the same as `payloads`.
    var androidPayloads: [ByteBuffer]
    var lease: Double
    var node: String
    /// The peers' liveness bound in seconds, 0 when no copy is routed to a peer here.
    var peerDeadAfter: Double

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 26)
        bindings.append(pushes.map(\.msgID))
        bindings.append(pushes.map(\.appID))
        bindings.append(pushes.map(\.json))
        bindings.append(pushes.map(\.identifier))
        bindings.append(pushes.map(\.timeToLive))
        bindings.append(pushes.map(\.expiresAt))
        bindings.append(pushes.map(\.createdAt))
        bindings.append(checked)
        bindings.append(fansOut)
        bindings.append(inboxed)
        bindings.append(payloads)
        bindings.append(wanted.keys)
        bindings.append(wanted.registrationIDs)
        bindings.append(wanted.aliases)
        bindings.append(lease)
        bindings.append(node)
        bindings.append(peerDeadAfter)
        bindings.append(pushes.map(\.travelsInBackground))
        bindings.append(pushes.map { $0.cid ?? "" })  // no cid is empty (PushRequest.validated)
        // A push's platforms, comma-separated ("" for all): an array of arrays would have to
        // be rectangular.
        bindings.append(pushes.map { $0.push.audience.platforms?.joined(separator: ",") ?? "" })
        bindings.append(androidPayloads)
        bindings.append(pushes.map(\.recordsEvents))
        bindings.append(pushes.map { $0.callbackJSON ?? "" })
        bindings.append(pushes.map(\.auditJSON))
        bindings.append(pushes.map { $0.push.source ?? "" })
        bindings.append(pushes.map(\.travelsInForeground))
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        let cells = row.makeRandomAccess()
        return (
            try cells[0].decode(Int64.self), try cells[1].decode(Int64.self), try cells[2].decode(Int64.self), try FanOutTarget(cells, at: 3),
            try cells[3 + FanOutTarget.columnCount].decode(String?.self)
        )
    }
}
