"""JPush's official Python client (PyPI `jpush`), unchanged, against a running Herald: the
calls an operator's code makes, each with the answer Herald must give, one line per call.

scripts/check-jpush-client.sh starts `herald serve`, creates the app with JPush-shaped
credentials, imports an iOS device (APNs token) and an Android device, connects an
Android device over MQTT (`herald-device`), and runs this with the venv's Python. The
environment names what it made (see `Setup` in harness.py).

Exits 1 if any check fails. A call Herald answers differently from JPush is a
`KNOWN GAP` line: its current answer is asserted, so a change is noticed.
"""

import logging
import sys
import time

import jpush
from devices import DeviceChecks
from harness import CheckFailed, Checks, Recorder, Setup, expect, expect_failure, is_msg_id, point_client_at
from keys import KeyChecks
from reports import ReportChecks

class PushChecks:
    def __init__(self, setup, client, checks):
        self.setup, self.client, self.checks = setup, client, checks
        self.msg_ids = {}

    def new_push(self, audience=jpush.all_, platform=jpush.all_, notification=None, message=None, options=None):
        push = self.client.create_push()
        push.audience, push.platform = audience, platform
        push.notification, push.message, push.options = notification, message, options
        return push

    def sent(self, name, push, sendno="0"):
        answer = push.send()
        expect(answer.status_code == 200, "HTTP %d" % answer.status_code)
        msg_id = answer.payload.get("msg_id")
        expect(is_msg_id(msg_id), "msg_id %r does not parse as an int64" % (msg_id,))
        expect(answer.payload.get("sendno") == sendno, "sendno %r, expected %r" % (answer.payload.get("sendno"), sendno))
        self.msg_ids[name] = msg_id
        return msg_id

    def run(self):
        c, s = self.checks, self.setup
        c.check("push.send() to all", self.broadcast)
        c.check("push.send_validate()", self.validate)
        c.check("jpush.ios(alert, badge='+1', sound, extras) to a registration_id", self.ios_example)
        c.check("jpush.android(alert, title, extras) to an alias", self.android_example)
        c.check("audience tag + tag_and + tag_not", self.tags)
        c.check("audience alias(two aliases), validated", lambda: self.audience_size(jpush.audience(jpush.alias("ios-alice", "droid-carol")), 2))
        c.check("jpush.message(msg_content, extras)", self.message)
        c.check("options sendno, time_to_live, apns_production, apns_collapse_id", self.options)
        c.check("options override_msg_id (an earlier msg_id, as an int)", self.override)
        c.check("silent push: jpush.ios(content_available=True)", self.silent)
        # Errors: the client raises JPushFailure with JPush's code (error_code).
        c.check("wrong master secret -> jpush.Unauthorized, 1004", self.wrong_secret)
        c.check("audience matching nobody -> 1011", lambda: self.failure(self.new_push(jpush.audience(jpush.tag("nobody-has-it")), notification=jpush.notification(alert="x")), 400, 1011))
        c.check("unknown field notification.ios.extra -> 1009", lambda: self.failure(self.new_push(notification={"ios": {"alert": "x", "extra": {"k": "v"}}}), 400, 1009))
        c.check("invalid value options.time_to_live=-1 -> 1003", lambda: self.failure(self.new_push(notification=jpush.notification(alert="x"), options={"time_to_live": -1}), 400, 1003))
        c.check("audience left unset (the client sends null) -> 1003", lambda: self.failure(self.new_push(audience=None, notification=jpush.notification(alert="x")), 400, 1003))

    def broadcast(self):
        push = self.new_push(notification=jpush.notification(alert="Hi"))
        msg_id = self.sent("broadcast", push)
        line = self.setup.android.received("notification", msg_id)
        apns = self.setup.ios.received(msg_id)
        expect(line.endswith(" Hi"), "Android device showed %r" % line)
        expect(apns["payload"]["aps"].get("alert") == "Hi", "APNs payload %s" % apns["payload"])
        return "msg_id %s, sendno \"0\"; on the Android device over MQTT and at APNs" % msg_id

    def validate(self):
        answer = self.new_push(notification=jpush.notification(alert="Hi")).send_validate()
        expect(answer.payload.get("sendno") == "0" and answer.payload.get("msg_id") == "0", "answer %s" % answer.payload)
        expect(answer.payload.get("audience_size") == 3, "audience_size %s, expected 3" % answer.payload.get("audience_size"))
        return "msg_id \"0\", audience_size 3"

    def ios_example(self):
        ios = jpush.ios(alert="Hello from the JPush client", badge="+1", sound="sound.caf", extras={"order": "42"})
        push = self.new_push(jpush.audience(jpush.registration_id(self.setup.ios_rid)), jpush.platform("ios"), jpush.notification(ios=ios))
        msg_id = self.sent("ios", push)
        payload = self.setup.ios.received(msg_id)["payload"]
        aps = payload["aps"]
        expect(aps.get("alert") == "Hello from the JPush client" and aps.get("sound") == "sound.caf", "aps %s" % aps)
        expect(isinstance(aps.get("badge"), int) and aps["badge"] >= 1, "badge %r" % aps.get("badge"))
        expect(payload.get("order") == "42", "extras not in the payload: %s" % payload)
        return "msg_id %s; APNs got alert, sound, badge %d and the extras" % (msg_id, aps["badge"])

    def android_example(self):
        android = jpush.android(alert="Hello Android", title="Herald", extras={"order": "43"})
        push = self.new_push(jpush.audience(jpush.alias("droid-carol")), jpush.platform("android"), jpush.notification(android=android))
        msg_id = self.sent("android", push)
        line = self.setup.android.received("notification", msg_id)
        expect(line.endswith("Herald: Hello Android"), "the device showed %r" % line)
        return "msg_id %s; the device showed title and alert" % msg_id

    def audience_size(self, audience, expected):
        answer = self.new_push(audience, notification=jpush.notification(alert="x")).send_validate()
        size = answer.payload.get("audience_size")
        expect(size == expected, "audience_size %s, expected %d" % (size, expected))
        return "audience_size %d" % size

    def tags(self):
        # vip or beijing (all three devices), and vip (not the imported Android one), and
        # not ios-only: the Android device on MQTT alone.
        audience = jpush.audience(jpush.tag("vip", "beijing"), jpush.tag_and("vip"), jpush.tag_not("ios-only"))
        self.audience_size(audience, 1)
        msg_id = self.sent("tags", self.new_push(audience, notification=jpush.notification(alert="Tagged")))
        self.setup.android.received("notification", msg_id)
        return "audience_size 1; msg_id %s reached the one device" % msg_id

    def message(self):
        message = jpush.message(msg_content="in-app hello", title="Note", extras={"k": "v"})
        msg_id = self.sent("message", self.new_push(jpush.audience(jpush.registration_id(self.setup.android.registration_id)), message=message))
        line = self.setup.android.received("message", msg_id)
        expect(line.endswith(" in-app hello"), "the device got %r" % line)
        return "msg_id %s; the device got the message" % msg_id

    def options(self):
        options = {"sendno": 4242, "time_to_live": 600, "apns_production": False, "apns_collapse_id": "order-7"}
        push = self.new_push(jpush.audience(jpush.tag("vip")), jpush.platform("ios", "android"), jpush.notification(alert="Options"), options=options)
        msg_id = self.sent("options", push, sendno="4242")
        line = self.setup.android.received("notification", msg_id)
        expect("[order-7]" in line, "the Android copy is not under the collapse id: %r" % line)
        apns = self.setup.ios.received(msg_id)
        expect(apns.get("collapse_id") == "order-7", "apns-collapse-id %r" % apns.get("collapse_id"))
        # Whole seconds, rounded either way: a second of slack over the 600.
        left = apns.get("expiration", 0) - time.time()
        expect(0 < left <= 601, "apns-expiration %s is not within time_to_live 600 s of now" % apns.get("expiration"))
        return "sendno \"4242\" echoed; apns-collapse-id order-7, apns-expiration within 600 s"

    def override(self):
        earlier = int(self.msg_ids["options"])
        push = self.new_push(jpush.audience(jpush.tag("vip")), jpush.platform("ios", "android"), jpush.notification(alert="Options, corrected"), options={"override_msg_id": earlier})
        msg_id = self.sent("override", push)
        self.setup.android.wait_for_line("the replacement on the Android device", lambda line: line == "replace [order-7] Options, corrected")
        apns = self.setup.ios.received(msg_id)
        expect(apns.get("collapse_id") == "order-7", "the APNs copy does not replace the earlier one: %r" % apns.get("collapse_id"))
        return "msg_id %s replaced %d on both devices" % (msg_id, earlier)

    def silent(self):
        ios = jpush.ios(content_available=True, badge=None, sound_disable=True, extras={"sync": "inbox"})
        msg_id = self.sent("silent", self.new_push(jpush.audience(jpush.alias("ios-alice")), jpush.platform("ios"), jpush.notification(ios=ios)))
        apns = self.setup.ios.received(msg_id)
        expect(apns["push_type"] == "background" and apns["priority"] == 5, "push type %s, priority %s" % (apns["push_type"], apns["priority"]))
        expect(apns["payload"]["aps"] == {"content-available": 1}, "aps %s" % apns["payload"]["aps"])
        return "APNs background push, priority 5, aps {content-available: 1}"

    def failure(self, push, status, code):
        failure = expect_failure(push.send, status, code)
        return "HTTP %d, JPushFailure.error_code %d (%s)" % (status, code, failure.details)

    def wrong_secret(self):
        recorder = Recorder()
        client = recorder.attach(jpush.JPush(self.setup.app_key, "0" * 24, zone=self.client.zone))
        push = client.create_push()
        push.audience, push.platform, push.notification = jpush.all_, jpush.all_, jpush.notification(alert="x")
        try:
            push.send()
        except jpush.Unauthorized:
            pass
        else:
            raise CheckFailed("the push with a wrong secret succeeded")
        status, code = recorder.last.status_code, recorder.last_error_code()
        expect((status, code) == (401, 1004), "HTTP %d code %s" % (status, code))
        return "jpush.Unauthorized (the client reads no body on a 401); the body says 1004"


def main():
    setup = Setup()
    zone = point_client_at(setup.herald_url)
    client = jpush.JPush(setup.app_key, setup.master_secret, zone=zone)
    checks = Checks()
    # The client logs every error answer at ERROR; the expected ones are printed below.
    logging.getLogger("jpush").addHandler(logging.NullHandler())
    logging.getLogger("jpush").propagate = False
    print("JPush Python client %s (PyPI jpush), unchanged, against %s" % (jpush.__version__, setup.herald_url))
    pushes = PushChecks(setup, client, checks)
    pushes.run()
    DeviceChecks(setup, client, checks).run()
    ReportChecks(setup, client, checks, pushes.msg_ids).run()
    # Last: it switches the master secret off for a while.
    KeyChecks(setup, client, checks).run()
    return checks.summary(jpush.__version__)


if __name__ == "__main__":
    sys.exit(main())
