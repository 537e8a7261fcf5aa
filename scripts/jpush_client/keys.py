"""API keys with JPush's client, unchanged: a key works where the master secret did (the
client sends it as Basic app_key:<key>), and an app that switched its master secret off
answers the client 401. Runs last: it switches the master secret off (and on again)."""

import os

import jpush
import requests
from harness import CheckFailed, Recorder, expect


class KeyChecks:
    def __init__(self, setup, client, checks):
        self.setup, self.client, self.checks = setup, client, checks
        self.key = None

    def run(self):
        c = self.checks
        c.check("an API key as the master secret: push.send() with scope send", self.key_pushes)
        c.check("master secret switched off -> jpush.Unauthorized, 401; the key still pushes", self.master_secret_off)

    def push(self, secret):
        recorder = Recorder()
        client = recorder.attach(jpush.JPush(self.setup.app_key, secret, zone=self.client.zone))
        push = client.create_push()
        push.audience, push.platform, push.notification = jpush.all_, jpush.all_, jpush.notification(alert="keys")
        return push, recorder

    def key_pushes(self):
        answer = requests.post(
            self.setup.herald_url.rstrip("/") + "/v3/keys",
            json={"name": "jpush client", "scopes": ["send"]},
            auth=(self.setup.app_key, self.setup.master_secret),
            timeout=10,
        )
        expect(answer.status_code == 201, "creating a key: HTTP %d %s" % (answer.status_code, answer.text))
        self.key = answer.json()["secret"]
        push, _ = self.push(self.key)
        sent = push.send()
        expect(sent.status_code == 200, "HTTP %d" % sent.status_code)
        return "HTTP 200, msg_id %s, with key %s" % (sent.payload.get("msg_id"), answer.json()["key_id"])

    def master_secret_off(self):
        base = self.setup.herald_url.rstrip("/")
        off = requests.put(base + "/v3/keys/master_secret", json={"enabled": False}, auth=(self.setup.app_key, self.setup.master_secret), timeout=10)
        expect(off.status_code == 200, "switching it off: HTTP %d %s" % (off.status_code, off.text))
        try:
            push, recorder = self.push(self.setup.master_secret)
            try:
                push.send()
            except jpush.Unauthorized:
                pass
            else:
                raise CheckFailed("the master secret still pushed")
            expect(recorder.last.status_code == 401, "HTTP %d" % recorder.last.status_code)
            keyed, _ = self.push(self.key)
            expect(keyed.send().status_code == 200, "the key stopped working")
        finally:
            on = requests.put(
                base + "/admin/v1/apps/%s/keys/master_secret" % self.setup.app_key,
                json={"enabled": True},
                headers={"Authorization": "Bearer " + os.environ["HERALD_ADMIN_TOKEN"]},
                timeout=10,
            )
            expect(on.status_code == 200, "switching it on again: HTTP %d %s" % (on.status_code, on.text))
        return "jpush.Unauthorized (401); the key pushes; the administrator switched it on again"
