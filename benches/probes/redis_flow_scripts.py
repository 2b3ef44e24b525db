#!/usr/bin/env python3
"""Redis server time per job of a claim and its outcomes, the scripts alone, as one worker cycles
through a limit's 50 slots: enqueue N jobs (`jobq enqueue --file`, a fresh `?prefix=`), then, from one
client, claim 50 (`claim.lua`, or `claim_limited.lua` under `global_concurrency = 50`), write their
outcomes (`finish.lua`), and again until the queue is empty. Prints the server's time per job of
each, read from `INFO commandstats` around every call. `empty` instead fills the limit with one
claim and times 20 claims of another worker that find it full, over the backlog of held-back jobs
(what each idle worker's claim costs while a limit is full). `partitioned` claims 50 at a time under
`global_concurrency = 50` per `meta.tenantId` (100 tenants, so the limit never binds and every job's
lane is read and counted). `notbinding` claims under `global_concurrency = 1000000` and
`rate = "100000000/1s"`, limits that never hold a job back. `CLAIM=500` in the environment changes
how many jobs each claim asks for (default 50); `LUA=DIR` loads the scripts from DIR instead of
crates/jobq/src/store/redis/lua, to take turns with an older version's (`git archive REV
crates/jobq/src/store/redis/lua | tar -x -C /tmp/old`, then `LUA=/tmp/old/crates/jobq/src/store/redis/lua`;
src/store/redis/lua at a commit before the library moved to crates/jobq). Needs only a local Redis on
6379 and a built `jobq` (no Python packages). Usage, from the repository:

    benches/probes/redis_flow_scripts.py target/release/jobq plain 20000
    benches/probes/redis_flow_scripts.py target/release/jobq limited 20000
    benches/probes/redis_flow_scripts.py target/release/jobq empty 5000
    benches/probes/redis_flow_scripts.py target/release/jobq partitioned 20000
    CLAIM=500 benches/probes/redis_flow_scripts.py target/release/jobq notbinding 20000
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

JOBQ, MODE = sys.argv[1], sys.argv[2]
N = int(sys.argv[3]) if len(sys.argv) > 3 else 20000
CLAIM = int(os.environ.get("CLAIM", "50"))
LUA = os.environ.get("LUA", "crates/jobq/src/store/redis/lua")
PREFIX = f"flowscripts{os.getpid()}:"

sock = socket.create_connection(("127.0.0.1", 6379))
reader = sock.makefile("rb")


def call(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    sock.sendall(out)
    return reply()


def reply():
    line = reader.readline()
    kind, rest = line[:1], line[1:-2]
    if kind == b"+":
        return rest.decode()
    if kind == b"-":
        raise RuntimeError(rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        n = int(rest)
        return None if n < 0 else reader.read(n + 2)[:-2]
    if kind == b"*":
        n = int(rest)
        return None if n < 0 else [reply() for _ in range(n)]
    raise RuntimeError(line)


def load(name):
    # As the store loads them: a shebang, the shared prelude, the script.
    common = open(f"{LUA}/common.lua").read()
    return call("SCRIPT", "LOAD", "#!lua\n" + common + open(f"{LUA}/{name}.lua").read())


def script_usec():
    for line in call("INFO", "commandstats").decode().splitlines():
        if line.startswith("cmdstat_evalsha:"):
            return int(line.split("usec=")[1].split(",")[0])
    return 0


claim_sha = load("claim" if MODE == "plain" else "claim_limited")
finish_sha = load("finish")
with tempfile.NamedTemporaryFile("w", suffix=".jsonl") as jobs:
    for i in range(N):
        jobs.write(json.dumps({"jobType": "bench.flow", "v": 1, "payload": {"i": i}, "meta": {"tenantId": str(i % 100)}}) + "\n")
    jobs.flush()
    url = f"redis://127.0.0.1:6379/?prefix={PREFIX}"
    subprocess.run([JOBQ, "--url", url, "enqueue", "--file", jobs.name], check=True, stdout=subprocess.DEVNULL)
queue = PREFIX + "{default}:"
limit = {"s": "type:bench.flow", "t": "bench.flow", "gc": 50, "pk": []}
if MODE == "partitioned":
    limit.update(pf="meta", pk=["tenantId"])
if MODE == "notbinding":
    limit.update(gc=1000000, rc=100000000, rp=1000)
rules = json.dumps({"ex": [], "pq": {}, "bt": [], "bp": {}, "lim": [limit]})


def forget_prefix():
    cursor = 0
    while True:
        cursor, keys = call("SCAN", cursor, "MATCH", PREFIX + "*", "COUNT", 1000)
        cursor = int(cursor)
        if keys:
            call("DEL", *keys)
        if cursor == 0:
            break


def claim_limited(worker, now):
    now_key = "%016x" % (now ^ (1 << 63))
    return call("EVALSHA", claim_sha, 1, queue, now_key, now, worker, CLAIM, PREFIX + "flow:", rules)


if MODE == "empty":
    now = int(time.time() * 1000)
    claim_limited("w1", now)
    took = []
    for _ in range(20):
        before = script_usec()
        assert not claim_limited("w2", now), "the limit is full"
        took.append(script_usec() - before)
    forget_prefix()
    print(f"empty claims under a full limit over {N - 50} held-back jobs: the first {took[0]} µs, "
          f"then a median of {sorted(took[1:])[9]} µs")
    sys.exit(0)

done = cycles = claim_us = finish_us = 0
while done < N:
    now = int(time.time() * 1000)
    now_key = "%016x" % (now ^ (1 << 63))
    before = script_usec()
    if MODE in ("limited", "partitioned", "notbinding"):
        got = claim_limited("w1", now)
    else:
        got = call("EVALSHA", claim_sha, 1, queue, now_key, now, "w1", CLAIM, "0", 0)
    claimed = script_usec()
    if not got:
        break
    outcomes = []
    for packed in got:
        parts = packed.split(b"\xff")
        fields = dict(zip(parts[0::2], parts[1::2]))
        outcomes += [fields[b"id"], int(fields.get(b"a", b"0")) + 1, "w1", "S", "", "", ""]
    call("EVALSHA", finish_sha, 1, queue, now, len(got), *outcomes)
    claim_us += claimed - before
    finish_us += script_usec() - claimed
    done += len(got)
    cycles += 1
forget_prefix()
print(
    f"{MODE}: {done} jobs in {cycles} cycles; claim {claim_us / done:.2f} µs a job, "
    f"outcomes {finish_us / done:.2f} µs a job, {(claim_us + finish_us) / cycles:.0f} µs a cycle"
)
