#!/usr/bin/env node
'use strict';
// An example persistent handler: it greets by name, and shows the other outcomes when asked.
//
//   [handlers."hello"]
//   exec = ["node", "examples/handlers/node/example.js"]
//   persistent = true
//   in_flight = 8                                    # jobs run concurrently, as promises
//
//   jobq enqueue hello '{"name":"Ada"}'              # success, result {"greeting":"hello Ada"}
//   jobq enqueue hello '{"progress":true}'           # three progress reports, then success
//   jobq enqueue hello '{"sleepMs":2000}'            # waits 2s, or stops early when jobq drops it
//   jobq enqueue hello '{"retry":"mail server busy"}' # a retry in 5s
//   jobq enqueue hello '{"fail":"no such user"}'     # dead at once
//   jobq enqueue hello '[1,2]'                       # discarded: not an object
//   jobq enqueue hello '{"fanout":["Ada","Grace"]}'  # a child per name, one after the other, awaited

const { setTimeout: sleep } = require('node:timers/promises');
const { run, progress, spawn, AwaitChildren, Discard, Fail, Retry } = require('./jobq-handler');

run(async (job, signal) => {
  const payload = job.payload;
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    throw new Discard('payload must be a JSON object');
  }
  // console.log goes to stderr, which jobq keeps as the program's log.
  console.log(`job ${job.jobId}, attempt ${job.attempt} of ${job.maxAttempts}`);
  if ('fail' in payload) throw new Fail(payload.fail);
  if ('retry' in payload) throw new Retry(payload.retry, '5s');
  if (payload.sleepMs) await sleep(payload.sleepMs, undefined, { signal });
  if ('fanout' in payload) {
    if (!job.deps) {
      // One after the other: each child waits for the one before it (by its key).
      let before = [];
      for (const name of payload.fanout) {
        spawn(job, 'hello', { name }, name, { after: before });
        before = [name];
      }
      throw new AwaitChildren();
    }
    // Run again once the children have ended: their results are in deps.
    return { greetings: job.deps.map((dep) => dep.result.greeting).sort() };
  }
  if (payload.progress) {
    for (const step of [1, 2, 3]) progress(job, step * 25, `step ${step} of 3`);
  }
  return { greeting: `hello ${payload.name ?? 'world'}` };
});
