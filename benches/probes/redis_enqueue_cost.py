#!/usr/bin/env python3
"""Redis server instructions per job of jobq's bulk enqueue script, at one or more commits.

Counts instructions, not seconds, so the figure repeats within about 1 % whatever else the machine
is doing (Redis seeds its hash tables at random). Each commit's `enqueue.lua` (with its `common.lua`
prelude) runs inside `redis-server` under `valgrind --tool=callgrind`, once with 2 calls of 1,000 like
jobs and once with 12; the difference over the 10,000 extra jobs is the cost of one job. Needs
valgrind, redis-server and the `redis` package (`pip install redis`). Usage, from the repository:

    benches/probes/redis_enqueue_cost.py f0ee5da HEAD
"""
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid

import redis

PORT = 6390
# Where the scripts are at a commit: the library's folder since it moved to crates/jobq, before that src/.
LUAS = ("crates/jobq/src/store/redis/lua", "src/store/redis/lua")


def script_at(commit):
    show = lambda path: subprocess.run(["git", "show", f"{commit}:{path}"], check=True, capture_output=True, text=True).stdout
    has = lambda path: subprocess.run(["git", "cat-file", "-e", f"{commit}:{path}"], capture_output=True).returncode == 0
    LUA = next(folder for folder in LUAS if has(f"{folder}/enqueue.lua"))
    source = show(f"{LUA}/enqueue.lua")
    # Before c0a44a6 the script took the queue name as its first argument.
    takes_queue = source.lstrip().startswith("-- KEYS: the queue's prefix. ARGV: queue,")
    return "#!lua\n" + show(f"{LUA}/common.lua") + source, takes_queue


def batch(n, base, takes_queue):
    """Shape 'S' arguments for n jobs like `jobq bench enqueue` sends: type noop, default attempts."""
    args = (["q"] if takes_queue else []) + ["S", n, "noop", "", 0, 5, ""]
    run_key = "%016x" % (1_700_000_000_000 ^ (1 << 63))
    for i in range(n):
        job_id = str(uuid.UUID(int=(0x0190_0000_0000_7000 << 64) | (base + i) * 7919))
        args += [job_id, '{"n":%d}' % (base + i), run_key, 1_700_000_000_000]
    return args


def instructions(script, takes_queue, calls):
    with tempfile.TemporaryDirectory() as dir:
        out = os.path.join(dir, "callgrind.out")
        server = subprocess.Popen(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "redis-server", "--port", str(PORT),
             "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        r = redis.Redis(port=PORT)
        for _ in range(300):
            try:
                r.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.1)
        sha = r.script_load(script)
        for c in range(calls):
            r.evalsha(sha, 1, "cost:{q}:", *batch(1000, c * 1000, takes_queue))
        try:
            r.shutdown(nosave=True)
        except redis.ConnectionError:
            pass
        server.wait()
        return int(re.search(r"^(?:totals|summary): (\d+)", open(out).read(), re.M).group(1))


for commit in sys.argv[1:] or ["HEAD"]:
    script, takes_queue = script_at(commit)
    per_job = (instructions(script, takes_queue, 12) - instructions(script, takes_queue, 2)) / 10_000
    print(f"{commit}: {per_job:,.0f} instructions per job")
