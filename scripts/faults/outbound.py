"""Webhooks against faulty receivers (issue #28, section 5).

- webhooks: more apps with a webhook than a node sends to at once (center.webhookConcurrency,
  8), each with its own receiver on loopback: most answer at once, one never answers, one
  answers every batch with a redirect (to a receiver that counts what reaches it). Every
  healthy endpoint must get every event (none stalled behind the hung one or behind the
  8 lowest ids), the redirect must be a failure shown on its endpoint and never followed;
  after a PostgreSQL outage every healthy endpoint gets the next events.
- sms-hung: two apps with SMS providers of their own on loopback; one provider never
  answers (its timeout_seconds: 5) and its app has more SMS due than the sender sends at
  once; the other answers at once. Every SMS of the healthy app must go out promptly,
  once each, whatever the hung one's backlog.

Prints lost / duplicated / stalled and fails unless each is 0.
"""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import herald as H


class Receiver:
    """An HTTP endpoint on 127.0.0.1 that answers as `mode` says: `ok` (200), `hang`
    (never answers), `redirect` (302 to `location`)."""

    def __init__(self, mode, location=None):
        self.mode, self.location = mode, location
        self.events = []  # (received at, event)
        self.bodies = []  # (received at, parsed body): what an SMS provider is sent
        self.requests = 0
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver.lock:
                    receiver.requests += 1
                if receiver.mode == "hang":
                    time.sleep(600)
                    return
                if receiver.mode == "redirect":
                    self.send_response(302)
                    self.send_header("Location", receiver.location)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                try:
                    parsed = json.loads(body)
                    events = parsed.get("events", [])
                except ValueError:
                    parsed, events = None, []
                now = time.time()
                with receiver.lock:
                    receiver.events.extend((now, e) for e in events)
                    receiver.bodies.append((now, parsed))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST  # a followed 302 would come as a GET

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/herald"

    def accepted_msg_ids(self):
        with self.lock:
            return [e.get("msg_id") for _, e in self.events if e.get("type") == "accepted"]

    def stop(self):
        self.server.shutdown()


def scenario_webhooks(report, quick):
    import faults as F

    apps_count = 12
    pushes = 5 if quick else 20
    # Its own PostgreSQL, to stop and start (loopback receivers allowed explicitly, as
    # they are by default only with the embedded database).
    pg = H.Postgres()
    pg.start()
    h = H.Herald("webhooks", database_url=pg.url, env={"HERALD_OUTBOUND_ALLOW_RANGES": "127.0.0.1"}).start()
    api = h.api()
    token = h.admin_token()
    sink = Receiver("ok")  # where the redirect points: must get nothing
    receivers = [Receiver("ok") for _ in range(apps_count - 2)] + [Receiver("hang"), Receiver("redirect", sink.url + "?followed")]
    apps = []
    for index, receiver in enumerate(receivers):
        app = h.create_app(f"webhooks-{index}")
        status, body, _ = api.call("PUT", f"/admin/v1/apps/{app.app_key}/events", {"enabled": True}, bearer=token)
        if status != 200:
            raise RuntimeError(f"events setting: {status} {body}")
        status, body, _ = api.call("POST", f"/admin/v1/apps/{app.app_key}/webhooks", {"url": receiver.url}, bearer=token)
        if status not in (200, 201):
            raise RuntimeError(f"webhook: {status} {body}")
        app.webhook_id = (body.get("webhook") or body).get("id")
        app.register(1)
        apps.append(app)
    report.info(f"{apps_count} apps, each with a webhook to its own receiver: {apps_count - 2} answer 200, one never answers, "
                f"one answers 302; {pushes} pushes per app")

    sent = {}  # app index -> [(msg_id, accepted at)]
    for round_no in range(pushes):
        for index, app in enumerate(apps):
            status, body, _ = app.push("all", content=f"webhooks-{round_no}")
            if status != 200:
                raise RuntimeError(f"push: {status} {body}")
            sent.setdefault(index, []).append((body["msg_id"], time.time()))

    healthy = range(apps_count - 2)

    def all_in():
        return all(set(m for m, _ in sent[i]) <= set(receivers[i].accepted_msg_ids()) for i in healthy)

    started = time.time()
    F.wait_until(all_in, 60, 0.5)
    report.info(f"waited {time.time() - started:.0f}s for the healthy endpoints")
    lost = duplicated = stalled = 0
    latencies = []
    for i in healthy:
        got = receivers[i].accepted_msg_ids()
        expected = [m for m, _ in sent[i]]
        lost += len(set(expected) - set(got))
        duplicated += len(got) - len(set(got))
        if not got:
            stalled += 1
        accepted_at = dict(sent[i])
        with receivers[i].lock:
            for at, event in receivers[i].events:
                if event.get("type") == "accepted" and event.get("msg_id") in accepted_at:
                    latencies.append(at - accepted_at[event["msg_id"]])
    report.check(lost == 0, f"healthy endpoints: lost {lost} accepted events of {len(healthy) * pushes}")
    report.check(stalled == 0, f"healthy endpoints that got nothing in 60 s: {stalled} of {len(healthy)}")
    report.info(f"healthy endpoints: {duplicated} events delivered twice (at least once: allowed); "
                f"latency from acceptance p50 {F.fmt_s(F.percentile(latencies, 50))}, max {F.fmt_s(max(latencies, default=0))}")

    redirecting = apps[-1]
    status, body, _ = api.call("GET", f"/admin/v1/apps/{redirecting.app_key}/webhooks/{redirecting.webhook_id}", bearer=token)
    failures = (body or {}).get("consecutive_failures", 0) if status == 200 else 0
    last_failure = json.dumps((body or {}).get("last_failure")) if status == 200 else f"{status}"
    report.check(receivers[-1].requests > 0 and failures > 0,
                 f"the redirecting endpoint's attempts are failures: {receivers[-1].requests} requests, consecutive_failures {failures}, "
                 f"last_failure {last_failure[:160]}")
    report.check(sink.requests == 0, f"the redirect was never followed: {sink.requests} requests at its target")
    report.check(receivers[-2].requests > 0, f"the hung endpoint was tried ({receivers[-2].requests} requests) and held no other")

    # A PostgreSQL outage: webhooks resume after it, without a restart of Herald.
    outage = 10 if quick else 20
    pg.stop(mode="immediate")
    time.sleep(outage)
    pg.start()
    F.wait_until(lambda: api.call("GET", "/readyz")[0] == 200, 60, 0.5)
    after = {}
    for index, app in enumerate(apps):
        for attempt in range(20):
            status, body, _ = app.push("all", content="after the outage")
            if status == 200:
                after[index] = body["msg_id"]
                break
            time.sleep(1)
    started = time.time()
    F.wait_until(lambda: all(after.get(i) in receivers[i].accepted_msg_ids() for i in healthy), 120, 0.5)
    missing = [i for i in healthy if after.get(i) not in receivers[i].accepted_msg_ids()]
    report.check(not missing, f"after a {outage}s PostgreSQL outage every healthy endpoint got the next push's event "
                              f"within {time.time() - started:.0f}s ({len(missing)} did not)")
    for receiver in receivers + [sink]:
        receiver.stop()
    h.stop(timeout=30)
    pg.stop_quietly()


def scenario_sms_hung(report, quick):
    import faults as F

    backlog = 100 if quick else 300
    healthy_devices = 20 if quick else 50
    h = H.Herald("sms-hung", env={"HERALD_OUTBOUND_ALLOW_RANGES": "127.0.0.1"}).start()
    api = h.api()
    token = h.admin_token()
    hung, ok = Receiver("hang"), Receiver("ok")
    apps = []
    for name, receiver, count in (("hung", hung, backlog), ("healthy", ok, healthy_devices)):
        app = h.create_app(f"sms-{name}")
        provider = {
            "url": receiver.url, "secret": "0123456789abcdef-secret", "timeout_seconds": 5,
            "body_template": '{"to": {{mobile}}, "key": {{idempotency_key}}, "text": {{content}}}',
        }
        status, body, _ = api.call("PUT", f"/admin/v1/apps/{app.app_key}/sms", provider, bearer=token)
        if status != 200:
            raise RuntimeError(f"SMS provider: {status} {body}")
        regs = app.register(count)
        for i, (rid, _, _) in enumerate(regs):
            status, body, _ = app.call("POST", f"/v3/devices/{rid}", {"mobile": f"+86139{len(apps)}{i:07d}"})
            if status != 200:
                raise RuntimeError(f"mobile: {status} {body}")
        apps.append(app)
    report.info(f"app 'hung': {backlog} devices, its provider never answers (timeout 5 s); "
                f"app 'healthy': {healthy_devices} devices, its provider answers at once; no device connected")
    sms = {"notification": {"alert": "parcel"}, "sms_message": {"content": "your parcel (SMS)", "delay_time": 0}}
    status, body, _ = apps[0].push("all", content="hung", **sms)
    if status != 200:
        raise RuntimeError(f"push: {status} {body}")
    F.wait_until(lambda: hung.requests > 0, 30, 0.1)
    time.sleep(1)  # the hung app's SMS fill its share of the sender
    pushed_at = time.time()
    status, body, _ = apps[1].push("all", content="healthy", **sms)
    if status != 200:
        raise RuntimeError(f"push: {status} {body}")
    F.wait_until(lambda: len(ok.bodies) >= healthy_devices, 60, 0.1)
    time.sleep(2)
    with ok.lock:
        keys = [b.get("key") for _, b in ok.bodies if b]
        latencies = [at - pushed_at for at, _ in ok.bodies]
    lost = healthy_devices - len(set(keys))
    duplicated = len(keys) - len(set(keys))
    stalled = sum(1 for latency in latencies if latency >= 5)
    report.check(lost == 0, f"healthy app: lost {lost} SMS of {healthy_devices}")
    report.check(duplicated == 0, f"healthy app: {duplicated} SMS sent twice")
    report.check(stalled == 0, f"healthy app: {stalled} SMS held for the hung provider's timeout (5 s) or longer; "
                               f"latency max {F.fmt_s(max(latencies, default=0))}")
    report.info(f"the hung provider got {hung.requests} requests meanwhile")
    for receiver in (hung, ok):
        receiver.stop()
    h.stop(timeout=30)
