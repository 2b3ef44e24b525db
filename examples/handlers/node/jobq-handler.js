'use strict';
// A persistent jobq handler in Node.js 18+, no dependencies.
//
// jobq starts the program once, writes one job (the envelope JSON) per line to its stdin and reads
// one reply per line from its stdout: protocol version 1, described in examples/handlers/README.md.
//
//   const { run } = require('./jobq-handler');
//   run(async (job, signal) => ({ greeting: `hello ${job.payload.name}` }));
//
// Resolving is success (undefined: without a result); throwing Retry, Fail, Discard, Wait, Snooze,
// RateLimited or AwaitChildren gives another outcome; any other error is a retry. spawn(job, …)
// asks for a child job, written with a success or an AwaitChildren (never with a failure). Jobs run concurrently as
// promises: jobq never hands over more than JOBQ_IN_FLIGHT unanswered jobs, so that is the bound.
// `signal` aborts when jobq drops the job (time-out, cancel, shutdown); pass it on to fetch() and
// timers.
//
// stdout belongs to the protocol, and a stray line there makes jobq restart the process. So on
// load this module keeps stdout's write for the replies alone and points process.stdout.write
// (console.log, console.info, console.dir…) at stderr, the program's log. A child process given
// stdio 'inherit' would still write to the real stdout: give it ['ignore', 2, 2] or 'pipe'.

const writeReply = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr);

/** An answer other than success, thrown by a handler. */
class Outcome extends Error {
  constructor(message, reply) {
    super(message);
    this.name = new.target.name;
    this.reply = reply; // undefined fields (an absent delay) are left out by JSON.stringify
  }
}

/** Run the job again: after `delay` ('30s', or seconds) if given, else after the back-off. */
class Retry extends Outcome {
  constructor(error, delay) {
    super(error, { outcome: 'retry', error: String(error), delay });
  }
}

/** The job can never succeed: it goes dead at once, whatever attempts remain. */
class Fail extends Outcome {
  constructor(error) {
    super(error, { outcome: 'fail', error: String(error) });
  }
}

/** The job should not run at all (obsolete, duplicate): it becomes discarded. */
class Discard extends Outcome {
  constructor(reason) {
    super(reason, { outcome: 'discard', reason: String(reason) });
  }
}

/** The work was handed to a third party; the job waits until `jobq resolve` finishes it. */
class Wait extends Outcome {
  constructor() {
    super('waiting', { outcome: 'wait' });
  }
}

/** Not now: start the job again after `delay`, without spending an attempt. */
class Snooze extends Outcome {
  constructor(delay) {
    super(`snoozed for ${delay}`, { outcome: 'snooze', delay });
  }
}

/** Upstream back-pressure: jobs of this type pause for `delay` (or the back-off). */
class RateLimited extends Outcome {
  constructor(delay) {
    super('rate limited', { outcome: 'rate-limited', delay });
  }
}

/**
 * Wait for the children spawned by this run; the job then runs again with their outcomes in
 * job.deps (each child's jobId, status and result), without having spent an attempt.
 */
class AwaitChildren extends Outcome {
  constructor() {
    super('awaiting its children', { outcome: 'await-children' });
  }
}

// The children each job asked for, by job id, sent with its outcome.
const spawned = new Map();

/**
 * Asks for a child job of `type`, written with this run's outcome if it succeeds or throws
 * AwaitChildren. Its id is job.jobId + '.' + key (or its place among this run's children), so a
 * run that happens again spawns nothing twice. `options` are enqueue options of the job JSON
 * (queue, priority, runAt, maxAttempts, uniqueKey, timeoutMs, expiresAt, meta), and `after`: the keys of
 * siblings it waits for (['extract'], or [{ key: 'extract', on: 'finish' }]).
 */
function spawn(job, type, payload, key, options = {}) {
  const child = { type, payload: payload === undefined ? null : payload, ...options };
  if (key != null) child.key = String(key);
  if (!spawned.has(job.jobId)) spawned.set(job.jobId, []);
  spawned.get(job.jobId).push(child);
}

/** Reports how far `job` has come (0-100); any number of times before its outcome. */
function progress(job, percent, message) {
  // Checked: a progress line jobq cannot read is a protocol error, which restarts the process.
  const value = Number(percent);
  if (!Number.isFinite(value)) throw new TypeError(`progress must be a number, not ${percent}`);
  const text = message == null ? undefined : String(message);
  send(JSON.stringify({ jobId: job.jobId, progress: value, message: text }));
}

/** Answers the jobs read from stdin; at its end, waits for the running ones and exits 0. */
function run(handle) {
  const running = new Map(); // jobId → { controller, done }
  const take = (line) => {
    const message = JSON.parse(line);
    if (message.drop !== undefined) {
      // The job still answers when its handler settles; jobq ignores that answer.
      running.get(message.drop)?.controller.abort(new Error(`dropped by jobq: ${message.reason}`));
      return;
    }
    const controller = new AbortController();
    const done = answer(handle, message, controller.signal)
      .finally(() => running.delete(message.jobId));
    running.set(message.jobId, { controller, done });
  };
  // Lines split by hand from each chunk read: cheaper than readline's event per line.
  let rest = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    let start = 0;
    let end = chunk.indexOf('\n');
    if (end === -1) {
      rest += chunk;
      return;
    }
    take(rest + chunk.slice(0, end));
    rest = '';
    start = end + 1;
    while ((end = chunk.indexOf('\n', start)) !== -1) {
      take(chunk.slice(start, end));
      start = end + 1;
    }
    rest = chunk.slice(start);
  });
  process.stdin.on('end', async () => {
    if (rest.trim() !== '') take(rest);
    await Promise.all(Array.from(running.values(), (job) => job.done));
    flush();
    // Exits even if the handler left timers or connections open: jobq waits for this exit.
    process.exit(0);
  });
}

/** Runs one job and writes its one outcome line, whatever the handler does. */
async function answer(handle, job, signal) {
  let line;
  try {
    let reply;
    try {
      const result = await handle(job, signal);
      reply = result === undefined ? { outcome: 'success' } : { outcome: 'success', result };
    } catch (err) {
      if (!(err instanceof Outcome)) throw err;
      reply = err.reply;
    }
    const children = spawned.get(job.jobId);
    spawned.delete(job.jobId);
    if (children) reply = { ...reply, spawn: children };
    // Inside the try: a result JSON cannot hold (a BigInt, a cycle) is the handler's error.
    line = JSON.stringify({ jobId: job.jobId, ...reply });
  } catch (err) {
    spawned.delete(job.jobId);
    console.error(err);
    line = JSON.stringify({ jobId: job.jobId, outcome: 'retry', error: describe(err) });
  }
  send(line);
}

// The error text jobq records, as `TypeError: x is not a function`.
function describe(err) {
  if (!(err instanceof Error)) return String(err);
  return err.message ? `${err.name}: ${err.message}` : err.name;
}

// Writes to a pipe are synchronous on Linux, so a reply is out as soon as this returns.
// Replies made in one turn of the event loop go out in one write at its end: a busy program then
// makes one system call per batch rather than per job, and no reply waits longer than the turn.
let pending = [];

function send(line) {
  if (pending.length === 0) setImmediate(flush);
  pending.push(line);
}

function flush() {
  if (pending.length === 0) return;
  const data = pending.join('\n') + '\n';
  pending = [];
  writeReply(data);
}

module.exports = {
  run, progress, spawn, Outcome, Retry, Fail, Discard, Wait, Snooze, RateLimited, AwaitChildren,
};
