#!/usr/bin/env python3
"""Sends FCM messages the way an operator's own Python sender does: google-auth for the
service account's access token, httpx over HTTP/2 for FCM's HTTP v1 sends, asyncio tasks
keeping --concurrency requests in flight.

Run by herald-fcm-bench (Sources/herald-fcm-bench) against the FCM sandbox it measures
HeraldFCM with, with the same key file. Prints one JSON line with the figures on stdout.

Needs: pip install google-auth requests 'httpx[http2]'
"""

import argparse
import asyncio
import json
import os
import time

import google.auth.transport.requests
import httpx
import requests
from google.oauth2 import service_account

SCOPE = "https://www.googleapis.com/auth/firebase.messaging"


def percentile(values, fraction):
    return values[min(len(values) - 1, int(fraction * len(values)))] if values else 0.0


async def send_all(client, url, token, bodies, count, concurrency, latencies):
    failed = 0
    next_index = 0

    async def worker():
        nonlocal failed, next_index
        while next_index < count:
            body = bodies[next_index % len(bodies)]
            next_index += 1
            began = time.perf_counter()
            answer = await client.post(url, headers={"Authorization": f"Bearer {token}"}, content=body)
            latencies.append((time.perf_counter() - began) * 1000)
            if answer.status_code != 200:
                failed += 1

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return failed


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--key-file", required=True)
    parser.add_argument("--ca-file", required=True)
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--warmup", type=int, default=2_000)
    parser.add_argument("--concurrency", type=int, default=200)
    arguments = parser.parse_args()

    os.environ["REQUESTS_CA_BUNDLE"] = arguments.ca_file
    with open(arguments.key_file) as f:
        key_file = json.load(f)
    credentials = service_account.Credentials.from_service_account_info(key_file, scopes=[SCOPE])
    credentials.refresh(google.auth.transport.requests.Request(session=requests.Session()))
    url = f"{arguments.url}/v1/projects/{key_file['project_id']}/messages:send"
    bodies = [
        json.dumps(
            {
                "message": {
                    "token": f"bench{n}:APA91b" + "x" * 140,
                    "notification": {"title": "Shop", "body": "Your order shipped"},
                    "android": {"priority": "HIGH", "ttl": "3600s", "notification": {}},
                    "data": {"order": "42", "msg_id": f"bench{n}"},
                }
            }
        ).encode()
        for n in range(1000)
    ]
    limits = httpx.Limits(max_connections=10, max_keepalive_connections=10)
    async with httpx.AsyncClient(http2=True, verify=arguments.ca_file, limits=limits, timeout=30) as client:
        await send_all(client, url, credentials.token, bodies, arguments.warmup, arguments.concurrency, [])
        latencies = []
        started = time.perf_counter()
        failed = await send_all(client, url, credentials.token, bodies, arguments.count, arguments.concurrency, latencies)
        seconds = time.perf_counter() - started
    latencies.sort()
    print(
        json.dumps(
            {
                "sent": arguments.count - failed,
                "failed": failed,
                "seconds": seconds,
                "p50_ms": percentile(latencies, 0.5),
                "p99_ms": percentile(latencies, 0.99),
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
