"""Starting and stopping real `herald serve` processes (and a PostgreSQL of our own) for
the fault run, and a small HTTP client for Herald's API. Loopback only, stdlib only."""

import base64
import http.client
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN_DIR = os.environ.get("HERALD_BIN_DIR", os.path.join(ROOT, ".build", "debug"))
KEEP = os.environ.get("FAULTS_KEEP") == "1"

_processes = []  # (Popen, on_cleanup) of everything we started
_temp_dirs = []
_cleanups = []


def log(*args):
    print(time.strftime("%H:%M:%S"), *args, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def temp_dir(prefix):
    path = tempfile.mkdtemp(prefix=prefix, dir=os.environ.get("FAULTS_TMP", "/tmp"))
    os.chmod(path, 0o755)  # the embedded cluster runs as the postgres user and must reach it
    _temp_dirs.append(path)
    return path


def binary(name):
    path = os.path.join(BIN_DIR, name)
    if not os.access(path, os.X_OK):
        raise SystemExit(f"{path} not found: build Herald first (swift build) or set HERALD_BIN_DIR")
    return path


def pg_bin_dir():
    if os.environ.get("HERALD_POSTGRES_BIN_DIR"):
        return os.environ["HERALD_POSTGRES_BIN_DIR"]
    base = "/usr/lib/postgresql"
    versions = sorted((int(v) for v in os.listdir(base) if v.isdigit()), reverse=True) if os.path.isdir(base) else []
    for v in versions:
        if os.access(f"{base}/{v}/bin/pg_ctl", os.X_OK):
            return f"{base}/{v}/bin"
    found = shutil.which("pg_ctl")
    if found:
        return os.path.dirname(found)
    raise SystemExit("PostgreSQL server binaries (pg_ctl) not found")


def as_postgres(args):
    """PostgreSQL refuses to run as root: run its binaries as the postgres user then."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--"] + args
    return args


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def fd_count(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def tcp_connections_to(port):
    """Established TCP connections whose local port is `port` (the server's side), from /proc."""
    count = 0
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                next(f)
                for line in f:
                    parts = line.split()
                    local_port = int(parts[1].split(":")[1], 16)
                    if local_port == port and parts[3] == "01":
                        count += 1
        except OSError:
            pass
    return count


class Postgres:
    """A PostgreSQL cluster of our own (trust auth on 127.0.0.1), to stop and start at will."""

    def __init__(self):
        self.bin = pg_bin_dir()
        self.dir = temp_dir("faults-pg.")
        self.data = os.path.join(self.dir, "data")
        self.port = free_port()
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
        self._run([f"{self.bin}/initdb", "-D", self.data, "-U", "herald", "--auth=trust", "-E", "UTF8", "--locale=C"])
        _cleanups.append(self.stop_quietly)

    def _run(self, args, check=True):
        result = subprocess.run(as_postgres(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
        if check and result.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed:\n{result.stdout}")
        return result

    @property
    def url(self):
        return f"postgres://herald:herald@127.0.0.1:{self.port}/herald?sslmode=disable"

    def start(self):
        options = f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories='' -c max_connections=200"
        self._run([f"{self.bin}/pg_ctl", "start", "-D", self.data, "-l", os.path.join(self.dir, "server.log"), "-w", "-t", "60", "-o", options])
        if not getattr(self, "_created", False):
            self._run([f"{self.bin}/psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "herald", "-d", "postgres", "-c", "CREATE DATABASE herald"])
            self._created = True

    def stop(self, mode="fast"):
        self._run([f"{self.bin}/pg_ctl", "stop", "-D", self.data, "-m", mode, "-w", "-t", "60"])

    def stop_quietly(self):
        self._run([f"{self.bin}/pg_ctl", "stop", "-D", self.data, "-m", "immediate", "-w"], check=False)


class Herald:
    """One `herald serve` on its own data directory and ports; restartable on the same ones."""

    def __init__(self, name="herald", database_url=None, env=None, data_dir=None):
        self.dir = data_dir or temp_dir(f"faults-{name}.")
        self.data_dir = os.path.join(self.dir, "data")
        self.http_port = free_port()
        self.mqtt_port = free_port()
        self.sandbox_port = free_port()
        self.inspect_port = free_port()
        self.database_url = database_url
        self.extra_env = env or {}
        self.proc = None
        self.starts = 0
        _cleanups.append(self.cleanup)

    @property
    def base(self):
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def start(self, timeout=120):
        self.starts += 1
        env = dict(os.environ)
        env.update(
            {
                "HERALD_MQTT_HOST": "127.0.0.1",
                "HERALD_APNS_SANDBOX": "on",
                "HERALD_APNS_SANDBOX_PORT": str(self.sandbox_port),
                "HERALD_APNS_SANDBOX_INSPECT_PORT": str(self.inspect_port),
                "HERALD_LOG_LEVEL": os.environ.get("FAULTS_HERALD_LOG_LEVEL", "notice"),
            }
        )
        env.pop("HERALD_DATABASE_URL", None)
        if self.database_url:
            env["HERALD_DATABASE_URL"] = self.database_url
        env.update(self.extra_env)
        self.out_path = os.path.join(self.dir, f"server-{self.starts}.out")
        self.err_path = os.path.join(self.dir, f"server-{self.starts}.err")
        args = [
            binary("herald"), "serve", "--data-dir", self.data_dir, "--http-host", "127.0.0.1",
            "--http-port", str(self.http_port), "--mqtt-port", str(self.mqtt_port),
        ]
        with open(self.out_path, "w") as out, open(self.err_path, "w") as err:
            self.proc = subprocess.Popen(args, stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=self.dir, env=env)
        _processes.append(self.proc)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"herald exited with {self.proc.returncode}:\n{self.tail_err()}")
            with open(self.out_path) as f:
                if "Herald is running" in f.read():
                    return self
            time.sleep(0.2)
        raise RuntimeError(f"herald did not start within {timeout}s:\n{self.tail_err()}")

    def tail_err(self, lines=30):
        try:
            with open(self.err_path, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    def kill9(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)

    def stop(self, timeout=60):
        """Graceful stop (SIGINT: Herald drains, then stops its embedded cluster)."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def cleanup(self):
        self.stop(timeout=30)
        # A Herald killed with -9 leaves its embedded cluster running.
        pg_data = os.path.join(self.data_dir, "postgres", "data")
        if os.path.exists(os.path.join(pg_data, "postmaster.pid")):
            subprocess.run(as_postgres([f"{pg_bin_dir()}/pg_ctl", "stop", "-D", pg_data, "-m", "immediate", "-w"]),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)

    def error_summary(self, top=4):
        """The most frequent error/critical log lines of every run so far (ids and times blanked)."""
        counts = {}
        for k in range(1, self.starts + 1):
            try:
                with open(os.path.join(self.dir, f"server-{k}.err"), errors="replace") as f:
                    for line in f:
                        if not re.search(r"\b(error|critical)\b", line):
                            continue
                        key = re.sub(r"^\S+ ", "", line.strip())
                        key = re.sub(r"[0-9a-f]{16,}", "<id>", key)
                        key = re.sub(r"\d+", "N", key)[:300]
                        counts[key] = counts.get(key, 0) + 1
            except OSError:
                pass
        return sorted(counts.items(), key=lambda kv: -kv[1])[:top]

    def admin_token(self):
        with open(os.path.join(self.data_dir, "admin-token")) as f:
            return f.read().strip()

    def api(self, timeout=30):
        return Api(self.base, timeout=timeout)

    def create_app(self, name="faults"):
        status, body, _ = self.api().call("POST", "/admin/v1/apps", {"name": name}, bearer=self.admin_token())
        if status != 201:
            raise RuntimeError(f"creating an app: {status} {body}")
        return App(self, body["app_key"], body["master_secret"])


def cleanup_all():
    """Stops everything started so far and removes its temporary directories."""
    while _cleanups:
        fn = _cleanups.pop()
        try:
            fn()
        except Exception as error:  # cleanup must go on
            print(f"cleanup: {error}", flush=True)
    while _processes:
        proc = _processes.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    if KEEP and _temp_dirs:
        print("kept:", " ".join(_temp_dirs), flush=True)
        _temp_dirs.clear()
    while _temp_dirs:
        shutil.rmtree(_temp_dirs.pop(), ignore_errors=True)


class Api:
    """HTTP/1.1 keep-alive client, one connection per thread."""

    def __init__(self, base, timeout=30):
        host, port = base.replace("http://", "").split(":")
        self.host, self.port, self.timeout = host, int(port), timeout
        self.local = threading.local()

    def _conn(self):
        conn = getattr(self.local, "conn", None)
        if conn is None:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            self.local.conn = conn
        return conn

    def call(self, method, path, body=None, basic=None, bearer=None, headers=None, raw=None):
        """Returns (status, parsed JSON body or text or None, seconds). Status 0: no answer."""
        h = dict(headers or {})
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            h.setdefault("Content-Type", "application/json")
        if raw is not None:
            data = raw
        if basic:
            h["Authorization"] = "Basic " + base64.b64encode(f"{basic[0]}:{basic[1]}".encode()).decode()
        if bearer:
            h["Authorization"] = "Bearer " + bearer
        started = time.monotonic()
        self.local.retried = False
        for attempt in range(2):
            conn = self._conn()
            reused = getattr(self.local, "used", False)
            try:
                conn.request(method, path, body=data, headers=h)
                resp = conn.getresponse()
                text = resp.read().decode(errors="replace")
                status = resp.status
                self.local.used = True
                if resp.getheader("connection", "").lower() == "close":
                    conn.close()
                    self.local.conn = None
                    self.local.used = False
                break
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as error:
                conn.close()
                self.local.conn = None
                self.local.used = False
                # A kept-alive connection closed by the server (or a server restarted) while
                # idle: once more on a new connection.
                if attempt == 0 and reused:
                    self.local.retried = True
                    continue
                return 0, f"{type(error).__name__}: {error}", time.monotonic() - started
            except (OSError, http.client.HTTPException) as error:
                conn.close()
                self.local.conn = None
                self.local.used = False
                return 0, f"{type(error).__name__}: {error}", time.monotonic() - started
        elapsed = time.monotonic() - started
        try:
            parsed = json.loads(text) if text else None
        except ValueError:
            parsed = text
        return status, parsed, elapsed


class App:
    def __init__(self, herald, app_key, master_secret):
        self.herald = herald
        self.app_key = app_key
        self.master_secret = master_secret
        self.api = herald.api()

    @property
    def basic(self):
        return (self.app_key, self.master_secret)

    def call(self, method, path, body=None, **kw):
        return self.api.call(method, path, body, basic=self.basic, **kw)

    def register(self, count, platform="android", apns_tokens=False, threads=8):
        """Registers `count` devices; returns [(registration_id, device_secret, apns_token)]."""
        results = [None] * count
        errors = []

        def work(indices):
            api = Api(self.herald.base)
            for i in indices:
                body = {"app_key": self.app_key, "platform": platform}
                token = None
                if apns_tokens:
                    token = "%064x" % random.getrandbits(256)
                    body["apns_token"] = token
                for _ in range(5):
                    status, resp, _ = api.call("POST", "/v3/devices", body)
                    if status in (200, 201):
                        results[i] = (resp["registration_id"], resp["device_secret"], token)
                        break
                    time.sleep(0.5)
                else:
                    errors.append((status, resp))

        chunks = [list(range(count))[k::threads] for k in range(threads)]
        workers = [threading.Thread(target=work, args=(c,)) for c in chunks]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        if errors:
            raise RuntimeError(f"registering devices: {len(errors)} failed, e.g. {errors[0]}")
        return results

    def tag(self, tag, rids):
        for start in range(0, len(rids), 1000):
            status, body, _ = self.call("POST", f"/v3/tags/{tag}", {"registration_ids": {"add": rids[start:start + 1000]}})
            if status != 200:
                raise RuntimeError(f"tagging {tag}: {status} {body}")

    def push(self, audience, content="x", ttl=None, api=None, **extra):
        body = {"audience": audience, "message": {"msg_content": content}}
        if ttl is not None:
            body["options"] = {"time_to_live": ttl}
        body.update(extra)
        return (api or self.api).call("POST", "/v3/push", body, basic=self.basic)
