#!/usr/bin/env python3
"""An example persistent handler: it greets by name, and shows the other outcomes when asked.

    [handlers."hello"]
    exec = ["python3", "examples/handlers/python/example.py"]
    persistent = true

    jobq enqueue hello '{"name":"Ada"}'              # success, result {"greeting":"hello Ada"}
    jobq enqueue hello '{"progress":true}'           # three progress reports, then success
    jobq enqueue hello '{"retry":"mail server busy"}' # a retry in 5s
    jobq enqueue hello '{"fail":"no such user"}'     # dead at once
    jobq enqueue hello '[1,2]'                       # discarded: not an object
    jobq enqueue hello '{"fanout":["Ada","Grace"]}'  # a child per name, one after the other, awaited
"""

from jobq_handler import AwaitChildren, Discard, Fail, Retry, progress, run, spawn


def handle(job):
    payload = job["payload"]
    if not isinstance(payload, dict):
        raise Discard("payload must be a JSON object")
    # print() goes to stderr, which jobq keeps as the program's log.
    print(f"job {job['jobId']}, attempt {job['attempt']} of {job['maxAttempts']}")
    if "fail" in payload:
        raise Fail(payload["fail"])
    if "retry" in payload:
        raise Retry(payload["retry"], delay="5s")
    if "fanout" in payload:
        if "deps" not in job:
            # One after the other: each child waits for the one before it (by its key).
            before = []
            for name in payload["fanout"]:
                spawn(job, "hello", {"name": name}, key=name, after=before)
                before = [name]
            raise AwaitChildren()
        # Run again once the children have ended: their results are in deps.
        return {"greetings": sorted(dep["result"]["greeting"] for dep in job["deps"])}
    if payload.get("progress"):
        for step in (1, 2, 3):
            progress(job, step * 25, f"step {step} of 3")
    return {"greeting": f"hello {payload.get('name', 'world')}"}


if __name__ == "__main__":
    run(handle)
