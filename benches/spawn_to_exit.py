#!/usr/bin/env python3
"""Spawn-to-exit of commands taking turns (A B C, A B C, ...), with medians of N rounds.

The commands run in the same window under the same load, so a store's own client and jobq are
compared fairly. Each command is spawned once as a warm-up; stdout and stderr go to /dev/null; a
command that fails stops the run.

    python3 benches/spawn_to_exit.py 50 \\
        "psql=psql -h 127.0.0.1 -U postgres test -c 'select 1'" \\
        "jobq=target/release/jobq --url postgres://postgres@127.0.0.1:5432/test?schema=x enqueue noop {}"
"""
import os
import shlex
import statistics
import sys
import time


def run(argv, devnull):
    started = time.perf_counter()
    pid = os.posix_spawnp(
        argv[0],
        argv,
        os.environ,
        file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)],
    )
    _, status = os.waitpid(pid, 0)
    took = time.perf_counter() - started
    if status != 0:
        sys.exit(f"{shlex.join(argv)} failed (wait status {status})")
    return took


def main():
    rounds = int(sys.argv[1])
    commands = [(a.split("=", 1)[0], shlex.split(a.split("=", 1)[1])) for a in sys.argv[2:]]
    devnull = os.open(os.devnull, os.O_RDWR)
    times = {name: [] for name, _ in commands}
    for _, argv in commands:
        run(argv, devnull)
    for _ in range(rounds):
        for name, argv in commands:
            times[name].append(run(argv, devnull))
    for name, _ in commands:
        t = sorted(times[name])
        print(
            f"{name:16s} median {statistics.median(t) * 1000:7.2f} ms"
            f"  p10 {t[len(t) // 10] * 1000:7.2f}  p90 {t[len(t) * 9 // 10] * 1000:7.2f}  (n={rounds})"
        )


if __name__ == "__main__":
    main()
