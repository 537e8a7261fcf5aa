"""FCM's wire contract checked by implementations Herald didn't write.

1. Herald's assertions (what HeraldFCM's client sent to the sandbox's token endpoint, via
   `heraldctl fcm doctor` and `heraldctl fcm send`) are verified with PyCA `cryptography`:
   RS256 over the header and claims, the key id, issuer, audience, scope, and a life of
   an hour at most. A tampered assertion must fail the same check.
2. google-auth (Google's own Python library, which signs its assertion itself) gets an
   access token from the sandbox's token endpoint, and httpx sends a message with it over
   HTTP/2: the sandbox takes what Google's client sends. A key file whose key is not the
   account's must be refused.

Usage: check.py SANDBOX_URL KEY_FILE CA_FILE
"""

import base64
import copy
import json
import os
import sys
import time

import google.auth.exceptions
import google.auth.transport.requests
import httpx
import requests
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from google.oauth2 import service_account

SCOPE = "https://www.googleapis.com/auth/firebase.messaging"
checks = 0


def check(condition, what):
    global checks
    if not condition:
        print(f"FAIL: {what}")
        sys.exit(1)
    checks += 1
    print(f"ok: {what}")


def b64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def verify(assertion, key_file, public_key):
    """Raises on a wrong assertion; returns its claims."""
    header_b64, claims_b64, signature_b64 = assertion.split(".")
    header = json.loads(b64url(header_b64))
    claims = json.loads(b64url(claims_b64))
    public_key.verify(
        b64url(signature_b64), f"{header_b64}.{claims_b64}".encode(), padding.PKCS1v15(), hashes.SHA256()
    )
    assert header["alg"] == "RS256", header
    assert header["kid"] == key_file["private_key_id"], header
    assert claims["iss"] == key_file["client_email"], claims
    assert claims["aud"] == key_file["token_uri"], claims
    assert claims["scope"].split(" ") == [SCOPE], claims
    assert 0 < claims["exp"] - claims["iat"] <= 3600, claims
    assert abs(claims["iat"] - time.time()) < 600, claims
    return claims


def main():
    url, key_path, ca = sys.argv[1:4]
    with open(key_path) as f:
        key_file = json.load(f)
    private_key = serialization.load_pem_private_key(key_file["private_key"].encode(), password=None)
    public_key = private_key.public_key()

    # 1. Herald's assertions, checked by PyCA cryptography.
    assertions = requests.get(f"{url}/sandbox/assertions", verify=ca, timeout=10).json()["assertions"]
    check(len(assertions) >= 2, f"the sandbox took {len(assertions)} assertions from heraldctl (doctor and send)")
    for assertion in assertions:
        claims = verify(assertion, key_file, public_key)
        check(True, f"Herald's assertion verifies with cryptography (RS256, kid, iss, aud, scope, {claims['exp'] - claims['iat']} s)")
    header_b64, claims_b64, signature_b64 = assertions[0].split(".")
    forged_claims = json.loads(b64url(claims_b64))
    forged_claims["scope"] = "https://www.googleapis.com/auth/cloud-platform"
    forged = ".".join(
        [header_b64, base64.urlsafe_b64encode(json.dumps(forged_claims).encode()).decode().rstrip("="), signature_b64]
    )
    try:
        verify(forged, key_file, public_key)
        check(False, "a tampered assertion is refused by the check")
    except InvalidSignature:
        check(True, "a tampered assertion is refused by the check")

    # 2. google-auth's own assertion, taken by the sandbox (which google-auth's transport
    # trusts through the environment, as for any private CA).
    os.environ["REQUESTS_CA_BUNDLE"] = ca
    session = requests.Session()
    credentials = service_account.Credentials.from_service_account_info(key_file, scopes=[SCOPE])
    credentials.refresh(google.auth.transport.requests.Request(session=session))
    check(bool(credentials.token), "google-auth got an access token from the sandbox's token endpoint")
    with httpx.Client(http2=True, verify=ca, timeout=10) as client:
        answer = client.post(
            f"{url}/v1/projects/{key_file['project_id']}/messages:send",
            headers={"Authorization": f"Bearer {credentials.token}"},
            json={"message": {"token": "dGVzdA:APA91b" + "Q" * 120, "notification": {"title": "interop", "body": "hello"}}},
        )
        check(answer.http_version == "HTTP/2", f"httpx spoke {answer.http_version} to the sandbox")
        check(answer.status_code == 200 and answer.json()["name"].startswith("projects/"), f"FCM send with google-auth's token: {answer.status_code}")
        bad = client.post(
            f"{url}/v1/projects/{key_file['project_id']}/messages:send",
            headers={"Authorization": f"Bearer {credentials.token}"},
            json={"message": {"token": "dGVzdA:APA91b" + "Q" * 120, "data": {"n": 1}}},
        )
        check(
            bad.status_code == 400 and bad.json()["error"]["status"] == "INVALID_ARGUMENT",
            "a data value that isn't a string is refused as FCM refuses it (400 INVALID_ARGUMENT)",
        )
    other = copy.deepcopy(key_file)
    other["private_key"] = (
        rsa.generate_private_key(public_exponent=65537, key_size=2048)
        .private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        .decode()
    )
    try:
        service_account.Credentials.from_service_account_info(other, scopes=[SCOPE]).refresh(
            google.auth.transport.requests.Request(session=session)
        )
        check(False, "an assertion signed with another key is refused")
    except google.auth.exceptions.RefreshError as error:
        check("invalid_grant" in str(error), "an assertion signed with another key is refused (invalid_grant)")
    print(f"fcm interop: {checks} checks passed")


if __name__ == "__main__":
    main()
