"""A small MQTT 3.1.1 device client (CONNECT, SUBSCRIBE, QoS 1 PUBLISH in, PUBACK,
PINGREQ) on asyncio, and a fleet of them running on a loop in a background thread.

Each device records every copy it receives by msg_id, with and without the DUP flag:
a copy without DUP of a msg_id the device already had is a duplicate; a DUP copy is a
redelivery, which is allowed."""

import asyncio
import json
import random
import struct
import threading
import time


def encode_length(n):
    out = bytearray()
    while True:
        byte = n % 128
        n //= 128
        if n:
            byte |= 0x80
        out.append(byte)
        if not n:
            return bytes(out)


def utf8(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("!H", len(b)) + b


def connect_packet(client_id, username=None, password=None, keepalive=60, clean=True, protocol=b"MQTT", level=4):
    flags = 0x02 if clean else 0
    payload = utf8(client_id)
    if username is not None:
        flags |= 0x80
    if password is not None:
        flags |= 0x40
    if username is not None:
        payload += utf8(username)
    if password is not None:
        payload += utf8(password)
    variable = utf8(protocol) + bytes([level, flags]) + struct.pack("!H", keepalive)
    body = variable + payload
    return bytes([0x10]) + encode_length(len(body)) + body


def subscribe_packet(packet_id, topic, qos=1):
    body = struct.pack("!H", packet_id) + utf8(topic) + bytes([qos])
    return bytes([0x82]) + encode_length(len(body)) + body


def puback_packet(packet_id):
    return bytes([0x40, 0x02]) + struct.pack("!H", packet_id)


PINGREQ = bytes([0xC0, 0x00])
DISCONNECT = bytes([0xE0, 0x00])


async def read_packet(reader):
    """Returns (first byte, body) of the next packet."""
    first = (await reader.readexactly(1))[0]
    length, multiplier = 0, 1
    for _ in range(4):
        byte = (await reader.readexactly(1))[0]
        length += (byte & 0x7F) * multiplier
        if not byte & 0x80:
            break
        multiplier *= 128
    body = await reader.readexactly(length) if length else b""
    return first, body


class Device:
    def __init__(self, rid, secret, app_key, keepalive=60):
        self.rid, self.secret, self.app_key, self.keepalive = rid, secret, app_key, keepalive
        self.copies = {}  # msg_id -> [copies without DUP, copies with DUP]
        self.first_seen = {}  # msg_id -> time.monotonic() of the first copy
        self.payloads = {}  # msg_id -> (payload type, msg_content)
        self.connected = False
        self.connects = 0  # accepted CONNACKs
        self.losses = 0  # connections lost after being accepted
        self.refusals = {}  # CONNACK code -> count
        self.errors = {}
        self.writer = None
        self.duplicate_count = 0
        self.sessions = 0  # TCP connections opened
        self.log = {}  # msg_id -> [(session, DUP flag, packet id)]
        self.duplicate_examples = []

    @property
    def duplicates(self):
        """Copies without DUP of a msg_id already received."""
        return self.duplicate_count

    @property
    def redeliveries(self):
        return sum(c[1] for c in self.copies.values())

    def _record(self, body, flags):
        dup = bool(flags & 0x08)
        qos = (flags >> 1) & 0x03
        tlen = struct.unpack("!H", body[:2])[0]
        pos = 2 + tlen
        packet_id = None
        if qos:
            packet_id = struct.unpack("!H", body[pos:pos + 2])[0]
            pos += 2
        payload = body[pos:]
        try:
            message = json.loads(payload)
            msg_id = message.get("msg_id")
            kind = (message.get("type"), (message.get("message") or {}).get("msg_content"))
        except (ValueError, AttributeError):
            msg_id, kind = None, ("unparsable", None)
        if msg_id:
            entry = self.copies.get(msg_id)
            if entry is None:
                entry = self.copies[msg_id] = [0, 0]
                self.first_seen[msg_id] = time.monotonic()
                self.payloads[msg_id] = kind
            self.log.setdefault(msg_id, []).append((self.sessions, dup, packet_id))
            if not dup and (entry[0] or entry[1]):
                # A copy without DUP after an earlier copy (DUP or not) is a duplicate.
                self.duplicate_count += 1
                if len(self.duplicate_examples) < 3:
                    self.duplicate_examples.append((msg_id, list(self.log[msg_id])))
            entry[1 if dup else 0] += 1
        return packet_id

    async def session(self, host, port, stop):
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 10)
        self.sessions += 1
        self.writer = writer
        try:
            writer.write(connect_packet(self.rid, self.app_key, self.secret, keepalive=self.keepalive))
            await writer.drain()
            first, body = await asyncio.wait_for(read_packet(reader), 15)
            if first >> 4 != 2 or len(body) < 2:
                raise ConnectionError(f"expected CONNACK, got {first:#x}")
            if body[1] != 0:
                self.refusals[body[1]] = self.refusals.get(body[1], 0) + 1
                return
            self.connects += 1
            self.connected = True
            writer.write(subscribe_packet(1, f"herald/{self.rid}/push"))
            await writer.drain()
            last_write = time.monotonic()
            while not stop.is_set():
                try:
                    first, body = await asyncio.wait_for(read_packet(reader), self.keepalive / 2)
                except asyncio.TimeoutError:
                    first = None
                if first is not None and first >> 4 == 3:
                    packet_id = self._record(body, first & 0x0F)
                    if packet_id is not None:
                        writer.write(puback_packet(packet_id))
                        last_write = time.monotonic()
                if time.monotonic() - last_write > self.keepalive / 2:
                    writer.write(PINGREQ)
                    last_write = time.monotonic()
                if writer.transport.get_write_buffer_size() > 0:
                    await writer.drain()
        finally:
            if self.connected:
                self.connected = False
                if not stop.is_set():
                    self.losses += 1
            writer.close()
            self.writer = None

    async def run(self, host, port, stop, backoff=(0.2, 2.0)):
        delay = backoff[0]
        while not stop.is_set():
            try:
                await self.session(host, port, stop)
                delay = backoff[0] if self.connects else delay
            except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError, ConnectionError) as error:
                name = type(error).__name__
                self.errors[name] = self.errors.get(name, 0) + 1
            if stop.is_set():
                break
            await asyncio.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, backoff[1])


class Fleet:
    """Devices on an asyncio loop in a background thread."""

    def __init__(self, host, port, devices, connect_concurrency=100):
        self.host, self.port, self.devices = host, port, devices
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.stop_event = None
        self.tasks = []
        self.connect_concurrency = connect_concurrency

    def submit(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def start(self):
        async def go():
            self.stop_event = asyncio.Event()
            # Stagger the first connections so the accept queue isn't flooded.
            for i, device in enumerate(self.devices):
                self.tasks.append(asyncio.ensure_future(device.run(self.host, self.port, self.stop_event)))
                if i % self.connect_concurrency == self.connect_concurrency - 1:
                    await asyncio.sleep(0.05)

        self.submit(go()).result()
        return self

    def connected(self):
        return sum(1 for d in self.devices if d.connected)

    def wait_connected(self, timeout=120, count=None):
        want = len(self.devices) if count is None else count
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.connected() >= want:
                return True
            time.sleep(0.2)
        return self.connected() >= want

    def stop(self):
        async def halt():
            if self.stop_event:
                self.stop_event.set()
            for d in self.devices:
                if d.writer:
                    d.writer.close()
            if self.tasks:
                await asyncio.wait(self.tasks, timeout=10)
            for t in self.tasks:
                t.cancel()

        try:
            self.submit(halt()).result(timeout=30)
        except Exception:
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)

    def received_total(self, msg_ids=None):
        if msg_ids is None:
            return sum(len(d.copies) for d in self.devices)
        return sum(1 for d in self.devices for m in msg_ids if m in d.copies)


def tally(expected, devices_by_rid):
    """expected: {msg_id: [rid, ...]}. Returns (lost, duplicates, redeliveries, examples)."""
    lost = []
    for msg_id, rids in expected.items():
        for rid in rids:
            if msg_id not in devices_by_rid[rid].copies:
                lost.append((msg_id, rid))
    duplicates = sum(devices_by_rid[rid].duplicates for rid in devices_by_rid)
    redeliveries = sum(devices_by_rid[rid].redeliveries for rid in devices_by_rid)
    return lost, duplicates, redeliveries
