#!/usr/bin/env python3
"""Drives the PyPI APNs client aioapns against the Herald APNs sandbox.

Run by herald-apns-bench (Sources/herald-apns-bench) against the same sandbox it
measures HeraldAPNs with. Token auth with the same key; trusts the sandbox's
self-signed certificate. Sends with aioapns's natural concurrency: asyncio.gather
over batches, aioapns's own connection pool (max_connections). Prints one JSON
line with the figures on stdout.

Needs: pip install aioapns
"""

import argparse
import asyncio
import json
import logging
import ssl
import sys
import time
import uuid

try:
    from aioapns import APNs, NotificationRequest, PushType
    from aioapns import connection as aioapns_connection
except ImportError:
    sys.exit("aioapns is not installed: pip install aioapns")


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ca-file", required=True, help="the sandbox's certificate PEM")
    parser.add_argument("--key-file", required=True, help="the .p8 (PKCS#8 PEM) signing key")
    parser.add_argument("--key-id", required=True)
    parser.add_argument("--team-id", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--warmup", type=int, default=5_000)
    parser.add_argument("--batch", type=int, default=500, help="notifications per asyncio.gather")
    parser.add_argument("--max-connections", type=int, default=10, help="aioapns's pool size (its default: 10)")
    parser.add_argument("--tokens", type=int, default=1000, help="distinct device tokens")
    return parser.parse_args()


def percentile(sorted_values, fraction):
    if not sorted_values:
        return 0.0
    index = min(len(sorted_values) - 1, int(fraction * len(sorted_values)))
    return sorted_values[index]


async def run(arguments):
    # aioapns logs a warning every time its pool is busy and it polls again: keep stdout/stderr readable.
    logging.getLogger("aioapns").setLevel(logging.ERROR)
    # aioapns talks only to Apple's hosts on 443: point its development protocol at the sandbox.
    protocol = aioapns_connection.APNsDevelopmentClientProtocol
    protocol.APNS_SERVER = arguments.host
    protocol.APNS_PORT = arguments.port

    context = ssl.create_default_context(cafile=arguments.ca_file)
    context.set_alpn_protocols(["h2"])

    with open(arguments.key_file) as key_file:
        key = key_file.read()
    client = APNs(
        key=key,
        key_id=arguments.key_id,
        team_id=arguments.team_id,
        topic=arguments.topic,
        use_sandbox=True,
        ssl_context=context,
        max_connections=arguments.max_connections,
    )
    tokens = ["%064x" % (0xB0000000 + index) for index in range(arguments.tokens)]
    latencies = []
    failures = {}

    async def send_one(index, record):
        request = NotificationRequest(
            device_token=tokens[index % len(tokens)],
            message={"aps": {"alert": {"title": "Herald", "body": "Benchmark notification %d" % index}}},
            notification_id=str(uuid.uuid4()),
            push_type=PushType.ALERT,
        )
        started = time.perf_counter()
        result = await client.send_notification(request)
        if record:
            latencies.append(time.perf_counter() - started)
            if not result.is_successful:
                reason = "%s %s" % (result.status, result.description)
                failures[reason] = failures.get(reason, 0) + 1

    async def send(count, record):
        for start in range(0, count, arguments.batch):
            end = min(start + arguments.batch, count)
            await asyncio.gather(*(send_one(index, record) for index in range(start, end)))

    await send(arguments.warmup, record=False)
    started = time.perf_counter()
    await send(arguments.count, record=True)
    elapsed = time.perf_counter() - started
    connections = len(client.pool.connections)
    client.pool.close()

    latencies.sort()
    print(
        json.dumps(
            {
                "client": "aioapns",
                "sent": arguments.count,
                "failed": sum(failures.values()),
                "failures": failures,
                "seconds": elapsed,
                "rate": arguments.count / elapsed,
                "p50_ms": percentile(latencies, 0.50) * 1000,
                "p90_ms": percentile(latencies, 0.90) * 1000,
                "p99_ms": percentile(latencies, 0.99) * 1000,
                "connections": connections,
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    asyncio.run(run(parse_arguments()))
