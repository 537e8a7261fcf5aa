"""The client's device API (`jpush.device`): a device's tags, alias and mobile, the app's
tags, tag membership, aliases, and presence. It changes only the imported Android device
and a tag of its own, so the pushes that follow still find what they expect."""

import jpush
from harness import UNKNOWN_RID, CheckFailed, expect, expect_failure


class DeviceChecks:
    def __init__(self, setup, client, checks):
        self.setup, self.device, self.checks = setup, client.create_device(), checks

    def run(self):
        c = self.checks
        c.check("device.get_deviceinfo(ios)", self.get_ios)
        c.check("device.set_deviceinfo(device_tag(add, remove))", self.set_tags)
        c.check("device.set_deviceinfo(device_alias)", self.set_alias)
        c.check("device.get_deviceinfo()['mobile'] (imported)", self.imported_mobile)
        c.check("device.set_devicemobile(device_mobile)", self.set_mobile)
        c.check("device.set_devicemobile('138-0013') -> 1003", self.bad_mobile)
        c.check("device.get_taglist()", self.taglist)
        c.check("device.check_taguserexist()", self.tag_membership)
        c.check("device.update_tagusers(device_regid(add, remove))", self.update_tag_users)
        c.check("device.get_aliasuser()", self.alias_users)
        c.check("device.delete_alias()", self.delete_alias)
        c.check("device.delete_tag()", self.delete_tag)
        c.check("device.delete_alias(), delete_tag(): 200, payload 'success'", self.deletes_answer_success)
        c.check("device.get_aliasuser(alias, platform=...)", self.alias_platform)
        c.check("device.delete_alias(alias, platform=...), delete_tag(tag, platform=...)", self.delete_by_platform)
        c.check("device.delete_alias(alias, platform='symbian') -> 1003", self.unknown_platform)
        c.check("device.get_device_status([...])", self.presence)

    def info(self, rid):
        answer = self.device.get_deviceinfo(rid)
        expect(answer.status_code == 200, "HTTP %d" % answer.status_code)
        return answer.payload

    def get_ios(self):
        info = self.info(self.setup.ios_rid)
        expect(info.get("alias") == "ios-alice", "alias %r" % info.get("alias"))
        expect(sorted(info.get("tags", [])) == ["beijing", "ios-only", "vip"], "tags %r" % info.get("tags"))
        return "alias ios-alice, tags beijing, ios-only, vip (as imported)"

    def set_tags(self):
        rid = self.setup.imported_android_rid
        answer = self.device.set_deviceinfo(rid, jpush.device_tag(jpush.add("promo", "android-old"), jpush.remove("beijing")))
        expect(answer.status_code == 200, "HTTP %d" % answer.status_code)
        tags = sorted(self.info(rid).get("tags", []))
        expect(tags == ["android-old", "promo"], "tags after the change %r" % tags)
        return "tags now android-old, promo"

    def set_alias(self):
        rid = self.setup.imported_android_rid
        self.device.set_deviceinfo(rid, jpush.device_alias("bob-2"))
        expect(self.info(rid).get("alias") == "bob-2", "alias not set")
        expect(self.device.get_aliasuser("bob-2").payload == {"registration_ids": [rid]}, "the alias does not find the device")
        return "alias bob-2"

    def imported_mobile(self):
        mobile = self.info(self.setup.imported_android_rid).get("mobile", "(absent)")
        # Herald keeps numbers in E.164: a mainland China number gets +86 (JPush answers
        # the number as it was given; docs/migrating-from-jpush.md says so).
        expect(mobile == "+8613800138000", "mobile %r, expected the imported 13800138000 as +8613800138000" % (mobile,))
        return "13800138000, from the import"

    def set_mobile(self):
        rid = self.setup.imported_android_rid
        answer = self.device.set_devicemobile(rid, jpush.device_mobile("13800138001"))
        expect(answer.status_code == 200, "HTTP %d" % answer.status_code)
        expect(self.info(rid).get("mobile") == "+8613800138001", "mobile not changed")
        return "mobile 13800138001, kept as +8613800138001"

    def bad_mobile(self):
        expect_failure(lambda: self.device.set_devicemobile(self.setup.imported_android_rid, jpush.device_mobile("138-0013")), 400, 1003)
        expect(self.info(self.setup.imported_android_rid).get("mobile") == "+8613800138001", "a refused mobile changed the device")
        return "HTTP 400, 1003; the device keeps its mobile"

    def taglist(self):
        tags = self.device.get_taglist().payload.get("tags")
        expected = {"vip", "beijing", "ios-only", "shanghai", "promo", "android-old"}
        expect(set(tags or []) == expected, "tags %r, expected %s" % (tags, sorted(expected)))
        return "GET /v3/tags/: %d tags" % len(tags)

    def tag_membership(self):
        rid = self.setup.ios_rid
        expect(self.device.check_taguserexist("vip", rid).payload == {"result": True}, "the device is not in vip")
        expect(self.device.check_taguserexist("promo", rid).payload == {"result": False}, "the device is in promo")
        return "vip: true, promo: false"

    def update_tag_users(self):
        ios, old = self.setup.ios_rid, self.setup.imported_android_rid
        answer = self.device.update_tagusers("campaign", jpush.device_regid(jpush.add(ios, old)))
        expect(answer.status_code == 200, "HTTP %d" % answer.status_code)
        self.device.update_tagusers("campaign", jpush.device_regid(jpush.remove(old)))
        expect(self.device.check_taguserexist("campaign", ios).payload == {"result": True}, "ios not in campaign")
        expect(self.device.check_taguserexist("campaign", old).payload == {"result": False}, "the Android device still in campaign")
        return "added two devices, removed one"

    def alias_users(self):
        answer = self.device.get_aliasuser("ios-alice")
        expect(answer.payload == {"registration_ids": [self.setup.ios_rid]}, "answer %s" % answer.payload)
        return "registration_ids [%s]" % self.setup.ios_rid

    def delete_alias(self):
        answer = self.device.delete_alias("bob-2")
        expect(200 <= answer.status_code < 300, "HTTP %d" % answer.status_code)
        expect(self.device.get_aliasuser("bob-2").payload == {"registration_ids": []}, "the alias is still there")
        expect(self.info(self.setup.imported_android_rid).get("alias") is None, "the device kept the alias")
        return "HTTP %d; the alias is gone from the device" % answer.status_code

    def delete_tag(self):
        answer = self.device.delete_tag("campaign")
        expect(200 <= answer.status_code < 300, "HTTP %d" % answer.status_code)
        expect(self.device.check_taguserexist("campaign", self.setup.ios_rid).payload == {"result": False}, "the tag is still on the device")
        return "HTTP %d; no device has the tag" % answer.status_code

    def deletes_answer_success(self):
        # JPush answers 200 with no body, which the client's DeviceResponse reads as 'success'.
        for answer in (self.device.delete_alias("nobody-has-this-alias"), self.device.delete_tag("nobody-has-this-tag")):
            expect(answer.status_code == 200 and answer.payload == "success", "HTTP %d, payload %r" % (answer.status_code, answer.payload))
        return "HTTP 200, payload 'success', as from JPush"

    def alias_platform(self):
        ios = self.setup.ios_rid
        for platform, expected in (("android", []), ("ios", [ios]), ("android,ios", [ios])):
            answer = self.device.get_aliasuser("ios-alice", platform=platform).payload
            expect(answer == {"registration_ids": expected}, "platform=%s: %s" % (platform, answer))
        return "platform=android: none; ios: the iOS device"

    def delete_by_platform(self):
        ios, old = self.setup.ios_rid, self.setup.imported_android_rid
        self.device.set_deviceinfo(old, {"alias": "shared", "tags": {"add": ["both"]}})
        self.device.set_deviceinfo(ios, {"alias": "shared", "tags": {"add": ["both"]}})
        self.device.delete_alias("shared", platform="android")
        expect(self.device.get_aliasuser("shared").payload == {"registration_ids": [ios]}, "the iOS device lost the alias too")
        self.device.delete_tag("both", platform="ios")
        expect(self.device.check_taguserexist("both", old).payload == {"result": True}, "the Android device lost the tag too")
        expect(self.device.check_taguserexist("both", ios).payload == {"result": False}, "the iOS device kept the tag")
        self.device.delete_alias("shared")
        self.device.delete_tag("both")
        self.device.set_deviceinfo(ios, jpush.device_alias("ios-alice"))
        return "only the named platform's device lost the alias or the tag"

    def unknown_platform(self):
        expect_failure(lambda: self.device.delete_alias("ios-alice", platform="symbian"), 400, 1003)
        expect(self.device.get_aliasuser("ios-alice").payload == {"registration_ids": [self.setup.ios_rid]}, "the alias was cleared")
        return "HTTP 400, 1003; nothing cleared"

    def presence(self):
        android, ios = self.setup.android.registration_id, self.setup.ios_rid
        statuses = self.device.get_device_status([android, ios, UNKNOWN_RID]).payload
        expect(statuses.get(android) == {"online": True}, "the MQTT device: %s" % statuses.get(android))
        expect(statuses.get(ios) == {"online": False}, "the iOS device, never connected: %s" % statuses.get(ios))
        if UNKNOWN_RID not in statuses or statuses[UNKNOWN_RID] is not None:
            raise CheckFailed("an unknown id: %r" % statuses.get(UNKNOWN_RID, "(absent)"))
        return "MQTT device online, iOS device offline (never connected), unknown id null"
