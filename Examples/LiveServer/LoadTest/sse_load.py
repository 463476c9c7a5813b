#!/usr/bin/env python3
"""Thousands of Server-Sent Events clients on the example server, each with its own live query.

    DATABASE_URL=postgres://… python3 sse_load.py --port 8080 --server-pid <pid> [--clients 2000] [--rounds 300]

Against a running LiveServer on 127.0.0.1 (its database the one DATABASE_URL names, reached
through `psql`): inserts one person per client, named `load-00042 …`; opens one
`GET /people/events?prefix=load-00042` stream per client, all at once, and waits for every
snapshot; then, round by round, renames a random person through one long-lived `psql` and
times how long its client takes to receive the change (from the moment the UPDATE is handed
to psql to the end of the event). Prints p50/p99 of those latencies, the server's resident
memory per client (from /proc, when --server-pid is given), and deletes the people it made.
Standard library only.
"""
import argparse
import asyncio
import os
import random
import subprocess
import time


def rss_bytes(pid):
    if pid is None:
        return None
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return None


class Client:
    def __init__(self, index):
        self.index = index
        self.prefix = f"load-{index:05d}"
        self.buffer = b""
        self.events = asyncio.Queue()

    async def open(self, port):
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", port)
        self.writer.write(f"GET /people/events?prefix={self.prefix} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        await self.writer.drain()
        asyncio.get_running_loop().create_task(self.read())

    async def read(self):
        while True:
            chunk = await self.reader.read(65536)
            if not chunk:
                return
            self.buffer += chunk
            while b"\n\n" in self.buffer:
                event, self.buffer = self.buffer.split(b"\n\n", 1)
                if b"event: " in event:
                    self.events.put_nowait((time.monotonic(), event))


def psql(sql):
    subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", os.environ["DATABASE_URL"], "-c", sql], check=True)


async def main():
    arguments = argparse.ArgumentParser()
    arguments.add_argument("--port", type=int, default=8080)
    arguments.add_argument("--server-pid", type=int)
    arguments.add_argument("--clients", type=int, default=2000)
    arguments.add_argument("--rounds", type=int, default=300)
    options = arguments.parse_args()

    psql("DELETE FROM people WHERE name LIKE 'load-%'")
    psql(f"INSERT INTO people (name) SELECT 'load-' || lpad(n::text, 5, '0') || ' a' FROM generate_series(0, {options.clients - 1}) n")
    before = rss_bytes(options.server_pid)
    clients = [Client(index) for index in range(options.clients)]
    started = time.monotonic()
    for client in clients:
        await client.open(options.port)
    for client in clients:
        _, event = await asyncio.wait_for(client.events.get(), 120)
        assert b"event: snapshot" in event and client.prefix.encode() in event, event
    opened = time.monotonic() - started
    after = rss_bytes(options.server_pid)

    writer = subprocess.Popen(["psql", "-X", "-q", os.environ["DATABASE_URL"]], stdin=subprocess.PIPE, text=True)
    latencies = []
    for round in range(options.rounds):
        client = random.choice(clients)
        sent = time.monotonic()
        writer.stdin.write(f"UPDATE people SET name = '{client.prefix} r{round}' WHERE name LIKE '{client.prefix} %';\n")
        writer.stdin.flush()
        while True:
            received, event = await asyncio.wait_for(client.events.get(), 30)
            if f"r{round}".encode() in event:
                latencies.append((received - sent) * 1000)
                break
    writer.stdin.close()
    writer.wait()

    latencies.sort()
    def percentile(p):
        return latencies[min(len(latencies) - 1, int(len(latencies) * p))]
    print(f"{options.clients} clients, each its own live query: opened and had their snapshots in {opened:.1f} s")
    if before is not None and after is not None:
        print(f"server resident memory: {before / 1e6:.1f} MB before, {after / 1e6:.1f} MB with the clients: "
              f"{(after - before) / options.clients / 1024:.1f} KB per client")
    print(f"{options.rounds} renames by psql, each reaching its one client: p50 {percentile(0.5):.1f} ms, "
          f"p99 {percentile(0.99):.1f} ms, max {latencies[-1]:.1f} ms")
    for client in clients:
        client.writer.close()
    psql("DELETE FROM people WHERE name LIKE 'load-%'")


asyncio.run(main())
