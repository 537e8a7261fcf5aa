"""What check.py needs around JPush's official client: pointing it at
Herald, recording each call's outcome, and looking at what the devices received.

Only public parts of the client are used: a zone added to `jpush.common.ZONES` (the table
the client reads its hosts from; JPush's own zones are left as they are) and a response
hook on the `requests` session each `jpush.JPush` exposes as `.session`. The installed
package is never edited.
"""

import json
import os
import re
import time
import traceback
import urllib.request

import jpush
from jpush import common

ZONE = "HERALD"


def point_client_at(base_url):
    """Adds a zone whose hosts are all Herald's URL, with JPush's default zone's paths
    (api.jpush.cn/v3/push, device.jpush.cn/v3/devices/, report.jpush.cn/v3/received, ...),
    as an operator does by changing three host names to one."""
    default = common.ZONES["DEFAULT"]
    common.ZONES[ZONE] = {name: re.sub(r"^https://[^/]+", base_url.rstrip("/"), url) for name, url in default.items()}
    return ZONE


class Recorder:
    """Keeps the last HTTP response the client got, through the session's response hook,
    for the answers the client reduces to an exception without the body (a 401 becomes
    `jpush.Unauthorized`, which carries no code)."""

    def __init__(self):
        self.last = None

    def attach(self, client):
        client.session.hooks["response"].append(self._record)
        return client

    def _record(self, response, *args, **kwargs):
        self.last = response
        return response

    def last_error_code(self):
        try:
            return self.last.json()["error"]["code"]
        except (ValueError, KeyError, TypeError, AttributeError):
            return None


UNKNOWN_RID = "ffffffffffffffffffff"


def is_msg_id(value):
    """JPush's msg_id: a decimal string that parses as a signed 64-bit integer."""
    return isinstance(value, str) and value.isdigit() and 0 < int(value) < 2**63


class CheckFailed(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)


def expect_failure(call, status, code):
    """Runs `call`, which must raise the client's `JPushFailure` carrying HTTP `status`
    and JPush's `code` (the client reads `error.code` of the body); returns the failure."""
    try:
        answer = call()
    except jpush.JPushFailure as failure:
        got = (failure.response.status_code, failure.error_code)
        expect(got == (status, code), "expected HTTP %d code %s, got HTTP %d code %s: %s" % (status, code, got[0], got[1], failure.details))
        return failure
    raise CheckFailed("expected HTTP %d code %s, the call succeeded: %s" % (status, code, answer))


class Checks:
    """Runs named checks, prints one line each, and counts them."""

    def __init__(self):
        self.passed = 0
        self.gaps = []
        self.failed = []

    def check(self, name, call):
        """`call` returns a short description of what it saw, or raises."""
        try:
            detail = call()
        except Exception as error:  # every failure is reported, and the run goes on
            self.failed.append(name)
            reason = str(error) if isinstance(error, CheckFailed) else "".join(traceback.format_exception_only(type(error), error)).strip()
            print("FAIL       %s: %s" % (name, reason), flush=True)
            return None
        self.passed += 1
        print("ok         %s%s" % (name, ": " + detail if detail else ""), flush=True)
        return detail

    def known_gap(self, name, gap, call):
        """A call Herald answers differently from JPush today: `call` asserts today's
        answer (so a change of it is noticed), and the gap is named in the output."""
        try:
            call()
        except Exception as error:
            self.failed.append(name)
            print("FAIL       %s: the known gap's answer changed (%s): %s" % (name, gap, error), flush=True)
            return
        self.gaps.append(name)
        print("KNOWN GAP  %s: %s" % (name, gap), flush=True)

    def note(self, name, text, call):
        """Something about the client itself, not Herald (`call` asserts it); not counted."""
        try:
            call()
        except Exception as error:
            self.failed.append(name)
            print("FAIL       %s: %s no longer holds: %s" % (name, text, error), flush=True)
            return
        print("note       %s: %s" % (name, text), flush=True)

    def summary(self, version):
        line = "JPush Python client %s against Herald: %d calls ok, %d known gaps, %d failed" % (
            version,
            self.passed,
            len(self.gaps),
            len(self.failed),
        )
        print(line)
        if self.failed:
            print("failed: " + ", ".join(self.failed))
        return 1 if self.failed else 0


def wait_for(what, probe, timeout=15.0):
    """Polls `probe` until it returns something truthy; fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise CheckFailed("timed out after %.0f s waiting for %s" % (timeout, what))
        time.sleep(0.2)


class AndroidDevice:
    """The Android device connected over MQTT: `herald-device`, whose output (one line
    per event: `notification <msg_id> [<identifier>] <title>: <alert>`, `message <msg_id>
    <content>`, `replace [<identifier>] ...`) is in a file."""

    def __init__(self, registration_id, events_path):
        self.registration_id = registration_id
        self.events_path = events_path

    def lines(self):
        with open(self.events_path, encoding="utf-8") as events:
            return events.read().splitlines()

    def wait_for_line(self, what, predicate):
        return wait_for(what, lambda: next((line for line in self.lines() if predicate(line)), None))

    def received(self, kind, msg_id):
        """The line of the notification or message `msg_id`, once the device has it."""
        prefix = "%s %s " % (kind, msg_id)
        return self.wait_for_line("the Android device's %s %s" % (kind, msg_id), lambda line: line.startswith(prefix))


class APNsSandbox:
    """The APNs sandbox `herald serve` started: what it recorded for the iOS device."""

    def __init__(self, inspect_url, token):
        self.inspect_url = inspect_url.rstrip("/")
        self.token = token

    def notifications(self):
        with urllib.request.urlopen("%s/notifications?device_token=%s" % (self.inspect_url, self.token), timeout=5) as answer:
            return json.load(answer)

    def received(self, msg_id):
        """The notification Herald sent to APNs for `msg_id`, once the sandbox has it."""

        def find():
            for record in self.notifications():
                if record.get("payload", {}).get("herald", {}).get("msg_id") == str(msg_id):
                    return record
            return None

        return wait_for("APNs notification of %s" % msg_id, find)


class Setup:
    """What check-jpush-client.sh made, from the environment."""

    def __init__(self):
        env = os.environ
        self.herald_url = env["HERALD_URL"]
        self.app_key = env["JPUSH_APP_KEY"]
        self.master_secret = env["JPUSH_MASTER_SECRET"]
        self.android = AndroidDevice(env["ANDROID_RID"], env["ANDROID_EVENTS"])
        self.ios_rid = env["IOS_RID"]
        self.ios = APNsSandbox(env["APNS_SANDBOX_URL"], env["IOS_APNS_TOKEN"])
        self.imported_android_rid = env["IMPORTED_ANDROID_RID"]
