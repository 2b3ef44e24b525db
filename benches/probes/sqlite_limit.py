"""SQLite's own limit for jobq's schema: N one-row transactions into jobq_jobs (a database that
`jobq migrate` made), with the columns an enqueue sets, beside the same into a bare table (integer key, one text column), at synchronous NORMAL and FULL.
usage: python3 benches/probes/sqlite_limit.py JOBQ [N]"""
import json, os, sqlite3, sys, time, uuid, subprocess
N = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
JOBQ = sys.argv[1]
DB = "/tmp/limit-jobq.db"
def fresh(sync, jobq):
    for s in ("", "-wal", "-shm"):
        try: os.remove(DB + s)
        except FileNotFoundError: pass
    if jobq:
        subprocess.run([JOBQ, "--url", "sqlite://" + DB, "migrate"], check=True, capture_output=True)
    c = sqlite3.connect(DB, isolation_level=None)
    c.execute("PRAGMA journal_mode=WAL"); c.execute(f"PRAGMA synchronous={sync}")
    if not jobq:
        c.execute("CREATE TABLE jobs (id INTEGER PRIMARY KEY, payload TEXT NOT NULL)")
    return c
for sync in ("NORMAL", "FULL"):
    for jobq in (False, True):
        c = fresh(sync, jobq)
        t0 = time.perf_counter()
        for i in range(N):
            if jobq:
                now = int(time.time() * 1000)
                c.execute("INSERT INTO jobq_jobs (id, queue, job_type, payload, meta, priority, max_attempts, run_at, unique_key, timeout_ms, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                          (str(uuid.uuid7()) if hasattr(uuid, "uuid7") else "%016x%016x" % (time.time_ns(), i), "default", "noop", json.dumps({"i": i}), "{}", 0, 5, now, None, None, now))
            else:
                c.execute("INSERT INTO jobs (payload) VALUES (?)", (json.dumps({"i": i}),))
        s = time.perf_counter() - t0
        print(json.dumps({"sync": sync, "table": "jobq_jobs" if jobq else "bare", "rows_per_s": round(N / s)}), flush=True)
        c.close()
