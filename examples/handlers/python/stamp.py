#!/usr/bin/env python3
"""Answers each job with the time it read it, in Unix microseconds: the handler of
`jobq bench --workload latency --persistent examples/handlers/python/stamp.py`, which measures
enqueue -> a persistent handler's first sight of the job."""

import time

from jobq_handler import run


def handle(job):
    return {"receivedUs": time.time_ns() // 1000}


if __name__ == "__main__":
    run(handle)
