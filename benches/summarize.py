#!/usr/bin/env python3
"""Summarizes the `jobq bench -o json` reports benches/all.sh leaves in a folder: one markdown table
per store, each figure the median of its runs with the runs in brackets.

    python3 benches/summarize.py FOLDER STORE...
"""

import glob
import json
import statistics
import sys

# (label, report name, path into the report, format)
ROWS = [
    ("enqueue one at a time, jobs/s", "enqueue", "enqueue.single.jobsPerSecond", "{:,.0f}"),
    ("— one call, p50 ms", "enqueue", "enqueue.single.callMs.p50", "{:.2f}"),
    ("enqueue in bulk (batches of 10,000), jobs/s", "enqueue", "enqueue.bulk.jobsPerSecond", "{:,.0f}"),
    ("drain 20,000 noop, in process, jobs/s", "drain", "drain.jobsPerSecond", "{:,.0f}"),
    ("drain 20,000 noop, 1 worker process, jobs/s", "p1", "drain.jobsPerSecond", "{:,.0f}"),
    ("drain 20,000 noop, 2 worker processes, jobs/s", "p2", "drain.jobsPerSecond", "{:,.0f}"),
    ("drain 10,000 `exec /bin/true`, 1 process, concurrency 64, jobs/s", "exec", "drain.jobsPerSecond", "{:,.0f}"),
    ("worker peak resident memory, noop drain, 1 process, MiB", "p1", "drain.workerPeakRssMib", "{:.1f}"),
    ("steady 1,000 jobs/s for 10 s: finished per second", "steady", "steady.finishRate", "{:,.0f}"),
    ("— pending jobs, average", "steady", "steady.depth.avg", "{:.1f}"),
    ("latency enqueue → handler start, p50 ms", "latency", "latency.ms.p50", "{:.2f}"),
    ("— p99 ms", "latency", "latency.ms.p99", "{:.2f}"),
    ("— max ms", "latency", "latency.ms.max", "{:.2f}"),
]


def dig(report, path):
    for key in path.split("."):
        if not isinstance(report, dict) or key not in report:
            return None
        report = report[key]
    return report


def main():
    folder, stores = sys.argv[1], sys.argv[2:]
    for store in stores:
        reports = {}
        for path in sorted(glob.glob(f"{folder}/{store}.*.json")):
            name = path.split("/")[-1].split(".")[1]
            try:
                with open(path) as f:
                    reports.setdefault(name, []).append(json.load(f))
            except (json.JSONDecodeError, OSError):
                pass
        if not reports:
            continue
        first = next(iter(reports.values()))[0]
        settings = ", ".join(f"{k}={v}" for k, v in (dig(first, "store.settings") or {}).items())
        print(f"\n### {store}: {dig(first, 'store.version')} ({settings})\n")
        print(f"{dig(first, 'machine.cpu')}, {dig(first, 'machine.cores')} cores, {dig(first, 'date')}\n")
        print("| measure | median [runs] |")
        print("|---|---|")
        for label, name, path, fmt in ROWS:
            values = [v for v in (dig(r, path) for r in reports.get(name, [])) if v is not None]
            if not values:
                continue
            runs = ", ".join(fmt.format(v) for v in values)
            print(f"| {label} | {fmt.format(statistics.median(values))} [{runs}] |")


if __name__ == "__main__":
    main()
