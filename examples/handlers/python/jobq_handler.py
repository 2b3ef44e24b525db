"""A persistent jobq handler in Python 3.8+, standard library only.

jobq starts the program once, writes one job (the envelope JSON) per line to its stdin and reads one
reply per line from its stdout: protocol version 1, described in examples/handlers/README.md.

    import jobq_handler

    def handle(job):
        return {"greeting": "hello " + job["payload"]["name"]}

    jobq_handler.run(handle)

Returning is success (None: without a result); raising Retry, Fail, Discard, Wait, Snooze,
RateLimited or AwaitChildren gives another outcome; any other exception is a retry. spawn(job, …)
asks for a child job, written with a success or an AwaitChildren (never with a failure). stdout belongs to the protocol,
and a stray line there makes jobq restart the process; so on import this module keeps stdout for the
replies alone and points file descriptor 1 and sys.stdout at stderr, the program's log. Even a
print() or a child process writing to fd 1 lands in the log.
"""

import json
import os
import sys
import threading
import traceback

__all__ = [
    "run", "progress", "spawn", "Outcome", "Retry", "Fail", "Discard", "Wait", "Snooze", "RateLimited",
    "AwaitChildren",
]

sys.stdout.flush()
_replies = os.dup(1)
os.dup2(2, 1)
sys.stdout = sys.stderr

# allow_nan=False: NaN is not JSON, and jobq would take the whole line as a protocol error.
_encode = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode
# Held around each reply, so lines from threads (and progress) never interleave.
_lock = threading.Lock()
_write = os.write
# The children each job asked for, by job id, sent with its outcome.
_spawned = {}


class Outcome(Exception):
    """An answer other than success, raised by a handler."""

    def __init__(self, message, **reply):
        super().__init__(message)
        self.reply = {key: value for key, value in reply.items() if value is not None}


class Retry(Outcome):
    """Run the job again: after `delay` ("30s", or seconds) if given, else after the back-off."""

    def __init__(self, error, delay=None):
        super().__init__(error, outcome="retry", error=str(error), delay=delay)


class Fail(Outcome):
    """The job can never succeed: it goes dead at once, whatever attempts remain."""

    def __init__(self, error):
        super().__init__(error, outcome="fail", error=str(error))


class Discard(Outcome):
    """The job should not run at all (obsolete, duplicate): it becomes discarded."""

    def __init__(self, reason):
        super().__init__(reason, outcome="discard", reason=str(reason))


class Wait(Outcome):
    """The work was handed to a third party; the job waits until `jobq resolve` finishes it."""

    def __init__(self):
        super().__init__("waiting", outcome="wait")


class Snooze(Outcome):
    """Not now: start the job again after `delay`, without spending an attempt."""

    def __init__(self, delay):
        super().__init__(f"snoozed for {delay}", outcome="snooze", delay=delay)


class RateLimited(Outcome):
    """Upstream back-pressure: jobs of this type pause for `delay` (or the back-off)."""

    def __init__(self, delay=None):
        super().__init__("rate limited", outcome="rate-limited", delay=delay)


class AwaitChildren(Outcome):
    """Wait for the children spawned by this run; the job then runs again with their outcomes in
    job["deps"] (each child's jobId, status and result), without having spent an attempt."""

    def __init__(self):
        super().__init__("awaiting its children", outcome="await-children")


def spawn(job, job_type, payload=None, key=None, **options):
    """Asks for a child job of `job_type`, written with this run's outcome if it succeeds or raises
    AwaitChildren. Its id is job["jobId"] + "." + key (or its place among this run's children), so a
    run that happens again spawns nothing twice. `options` are enqueue options of the job JSON
    (queue, priority, runAt, maxAttempts, uniqueKey, timeoutMs, expiresAt, meta), and `after`: the keys of
    siblings it waits for (`after=["extract"]`, or `[{"key": "extract", "on": "finish"}]`)."""
    child = {"type": job_type, "payload": payload, **options}
    if key is not None:
        child["key"] = str(key)
    with _lock:
        _spawned.setdefault(job["jobId"], []).append(child)


def progress(job, percent, message=None):
    """Reports how far `job` has come (0-100); any number of times before its outcome."""
    # Coerced: a progress line jobq cannot read is a protocol error, which restarts the process.
    line = {"jobId": job["jobId"], "progress": float(percent)}
    if message is not None:
        line["message"] = str(message)
    _send(_encode(line))


def run(handle, threads=1):
    """Answers the jobs read from stdin until it closes, then returns (and the program exits 0).

    Jobs run one at a time, in the order read. `threads=N` runs up to N at once on a thread pool,
    for handlers that mostly wait on I/O; give jobq an `in_flight` of at least N to keep them busy.
    """
    if threads > 1:
        _run_threads(handle, threads)
        return
    loads = json.loads
    for line in sys.stdin.buffer:
        message = loads(line)
        # One at a time, a job is answered before its drop is read; jobq ignores the drop's answer.
        if "drop" not in message:
            _write_all(_answer(handle, message))


def _run_threads(handle, threads):
    from concurrent.futures import ThreadPoolExecutor

    # Jobs handed to the pool and not finished, so that a drop can skip one that has not started.
    # A running thread cannot be stopped: it answers when done, and jobq ignores that answer.
    queued = {}
    with ThreadPoolExecutor(threads, thread_name_prefix="jobq") as pool:
        for line in sys.stdin.buffer:
            message = json.loads(line)
            job_id = message.get("drop")
            if job_id is not None:
                future = queued.pop(job_id, None)
                if future is not None and future.cancel():
                    error = f"dropped before it started: {message.get('reason')}"
                    _send(_encode({"jobId": job_id, "outcome": "retry", "error": error}))
                continue
            future = pool.submit(_answer_and_send, handle, message)
            queued[message["jobId"]] = future
            # Added after the insert: on a future already done it runs at once, so nothing lingers.
            future.add_done_callback(lambda _, job_id=message["jobId"]: queued.pop(job_id, None))
    # Leaving the block waits for the jobs in hand: at end of input they are finished and answered.


def _answer(handle, job):
    """Runs one job and returns its one outcome line, whatever the handler does."""
    job_id = job["jobId"]
    try:
        try:
            result = handle(job)
        except Outcome as outcome:
            reply = outcome.reply
        else:
            if result is None and job_id not in _spawned:
                # The common answer, spelled out: a third of a no-op job's time went to encoding it.
                return b'{"jobId":%s,"outcome":"success"}\n' % _encode(job_id).encode()
            reply = {"outcome": "success", "result": result}
        with _lock:
            children = _spawned.pop(job_id, None)
        if children:
            reply = {**reply, "spawn": children}
        # Encoded inside the try: a result that is not JSON is the handler's error, not a crash.
        line = _encode({"jobId": job_id, **reply})
    except Exception as error:
        with _lock:
            _spawned.pop(job_id, None)
        traceback.print_exc()
        text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        line = _encode({"jobId": job_id, "outcome": "retry", "error": text})
    return line.encode() + b"\n"


def _answer_and_send(handle, job):
    _send_line(_answer(handle, job))


def _send(line):
    _send_line(line.encode() + b"\n")


def _send_line(data):
    with _lock:
        _write_all(data)


def _write_all(data):
    """One write for a reply; a long one may take several (a pipe takes 64 KiB at a time)."""
    written = _write(_replies, data)
    while written < len(data):
        written += _write(_replies, data[written:])
