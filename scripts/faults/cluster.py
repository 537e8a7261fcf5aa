"""The cluster's fault scenarios (issue #28, section 7): several `herald serve` on one
PostgreSQL, raw MQTT devices that move to another node when theirs goes away.

- cluster-kill9: kill -9 of a node while a broadcast is being delivered. Its devices come
  back on the other nodes; a copy the dead node may have sent comes again only with DUP.
- cluster-flap: devices opening a new connection on the other node every 0.1-0.5 s while
  pushes come at a steady rate. Nothing lost, nothing sent twice without DUP, one
  connection each at the end.

Each prints lost / duplicated (without DUP) / stalled, and fails unless all are 0.
"""

import asyncio
import random
import threading
import time

import herald as H
import mqtt as M

ADMIN_TOKEN = "faults-cluster-admin-token-0123456789"
KEY_ENCRYPTION_KEY = "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc="


class Node(H.Herald):
    """One `herald serve` of the cluster, on the shared PostgreSQL."""

    def __init__(self, name, database_url):
        super().__init__(
            name,
            database_url=database_url,
            env={
                "HERALD_NODE_ID": name,
                "HERALD_ADMIN_TOKEN": ADMIN_TOKEN,
                "HERALD_KEY_ENCRYPTION_KEY": KEY_ENCRYPTION_KEY,
                "HERALD_APNS_SANDBOX": "off",
                "HERALD_DATABASE_POOL_SIZE": "4",
                "HERALD_DATABASE_DELIVERY_POOL_SIZE": "6",
                "HERALD_CLUSTER_HEARTBEAT_INTERVAL": "1",
                "HERALD_CLUSTER_DEAD_AFTER": "3",
                "HERALD_CLUSTER_DRAIN_DELAY": "0",
                "HERALD_CENTER_ACK_TIMEOUT": "3",
            },
        )

    def admin_token(self):
        return ADMIN_TOKEN


def start_cluster(count):
    pg = H.Postgres()
    pg.start()
    nodes = [Node(f"node{i + 1}", pg.url) for i in range(count)]
    nodes[0].start()  # migrates the database first
    for node in nodes[1:]:
        node.start()
    return pg, nodes


class MovingDevice(M.Device):
    """A device that reconnects to the next node of `ports` whenever it loses its own."""

    def __init__(self, rid, secret, app_key, ports, first):
        super().__init__(rid, secret, app_key)
        self.ports, self.index = ports, first

    async def run(self, host, port, stop, backoff=(0.2, 2.0)):
        while not stop.is_set():
            try:
                await self.session(host, self.ports[self.index % len(self.ports)], stop)
            except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError, ConnectionError) as error:
                name = type(error).__name__
                self.errors[name] = self.errors.get(name, 0) + 1
            if stop.is_set():
                break
            self.index += 1
            await asyncio.sleep(backoff[0] * (0.5 + random.random()))


def tally(report, what, expected, by_rid, settle, stalled_after=None):
    """Waits up to `settle` s for every copy; reports lost, duplicated and stalled (a copy
    that came later than `stalled_after` s after its push)."""
    import faults as F

    lost, duplicates = F.delivery_check(report, expected, by_rid, what, settle)
    return lost, duplicates


def scenario_cluster_kill9(report, quick):
    import faults as F

    n = 300 if quick else 1500
    rounds = 2 if quick else 3
    pg, nodes = start_cluster(3)
    app = nodes[0].create_app()
    regs = app.register(n)
    rids = [r[0] for r in regs]
    ports = [node.mqtt_port for node in nodes]
    devices = [MovingDevice(rid, secret, app.app_key, ports, i % 3) for i, (rid, secret, _) in enumerate(regs)]
    by_rid = {d.rid: d for d in devices}
    fleet = M.Fleet("127.0.0.1", ports[0], devices).start()
    report.check(fleet.wait_connected(timeout=120), f"{fleet.connected()} of {n} devices connected over 3 nodes")
    expected = {}
    victim = nodes[0]
    for round_no in range(1, rounds + 1):
        tag = f"[round {round_no}]"
        this_round = {}
        for k in range(3):
            status, body, _ = app.push("all", content=f"cluster-kill9-{round_no}-{k}", api=nodes[(round_no + k) % 3].api())
            if status != 200:
                raise RuntimeError(f"push: {status} {body}")
            this_round[body["msg_id"]] = rids
        expected.update(this_round)
        total = sum(len(t) for t in this_round.values())
        F.wait_until(lambda: fleet.received_total(this_round) >= 0.4 * total, 120, 0.01)
        got = fleet.received_total(this_round)
        victim.kill9()
        report.info(f"{tag} kill -9 of {victim.dir.split('/')[-1]} with {got} of {total} copies delivered")
        report.check(got < total, f"{tag} the kill came while copies were still flowing")
        F.delivery_check(report, expected, by_rid, f"{tag} every push so far", F.size("SETTLE", quick))
        victim.start()
        victim = nodes[round_no % 3]
    fleet.stop()
    for node in nodes:
        node.stop(timeout=30)
    pg.stop_quietly()


def scenario_cluster_flap(report, quick):
    import faults as F

    flappers = 10 if quick else 25
    seconds = 10 if quick else 30
    rate = 25
    pg, nodes = start_cluster(2)
    app = nodes[0].create_app()
    regs = app.register(flappers)
    rids = [r[0] for r in regs]
    ports = [node.mqtt_port for node in nodes]
    devices = [M.Device(rid, secret, app.app_key) for rid, secret, _ in regs]
    by_rid = {d.rid: d for d in devices}
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    stop = None
    sessions = {}

    async def flap(device, until):
        i = random.randrange(2)
        tasks = []
        while time.monotonic() < until:
            tasks.append(asyncio.ensure_future(device.session("127.0.0.1", ports[i % 2], stop)))
            await asyncio.sleep(random.uniform(0.1, 0.5))
            i += 1
        sessions[device.rid] = tasks

    async def begin():
        nonlocal stop
        stop = asyncio.Event()

    asyncio.run_coroutine_threadsafe(begin(), loop).result()
    until = time.monotonic() + seconds
    flapping = [asyncio.run_coroutine_threadsafe(flap(d, until), loop) for d in devices]
    expected = {}
    pushed = 0
    started = time.monotonic()
    while time.monotonic() < until:
        targets = random.sample(rids, min(3, len(rids)))
        status, body, _ = app.push({"registration_id": targets}, content=f"flap-{pushed}", api=nodes[pushed % 2].api())
        if status == 200:
            expected[body["msg_id"]] = targets
        pushed += 1
        rest = started + pushed / rate - time.monotonic()
        if rest > 0:
            time.sleep(rest)
    for f in flapping:
        f.result(timeout=30)
    report.info(f"{flappers} devices each opened a connection on the other node every 0.1-0.5 s for {seconds}s "
                f"({sum(d.sessions for d in devices)} connections); {len(expected)} pushes of {pushed} accepted at {rate}/s")
    report.check(len(expected) == pushed, f"every push accepted: {len(expected)} of {pushed}")
    lost, duplicates = F.delivery_check(report, expected, by_rid, "flapping", F.size("SETTLE", quick))
    time.sleep(3)
    open_sessions = {rid: sum(1 for t in tasks if not t.done()) for rid, tasks in sessions.items()}
    extra = {rid: k for rid, k in open_sessions.items() if k != 1}
    report.check(not extra, f"one connection per device at the end ({len(extra)} devices with another count, e.g. {list(extra.items())[:3]})")

    async def halt():
        stop.set()
        every = [t for tasks in sessions.values() for t in tasks]
        for t in every:
            t.cancel()
        await asyncio.gather(*every, return_exceptions=True)

    asyncio.run_coroutine_threadsafe(halt(), loop).result(timeout=30)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=10)
    for node in nodes:
        node.stop(timeout=30)
    pg.stop_quietly()
