#!/usr/bin/env php
<?php
// An example persistent handler: it greets by name, and shows the other outcomes when asked.
//
//   [handlers."hello"]
//   exec = ["php", "examples/handlers/php/example.php"]
//   persistent = true
//
//   jobq enqueue hello '{"name":"Ada"}'              # success, result {"greeting":"hello Ada"}
//   jobq enqueue hello '{"progress":true}'           # three progress reports, then success
//   jobq enqueue hello '{"retry":"mail server busy"}' # a retry in 5s
//   jobq enqueue hello '{"fail":"no such user"}'     # dead at once
//   jobq enqueue hello '"Ada"'                       # discarded: not an object
//   jobq enqueue hello '{"fanout":["Ada","Grace"]}'  # a child per name, one after the other, awaited

declare(strict_types=1);

require __DIR__ . '/jobq_handler.php';

use Jobq\{AwaitChildren, Discard, Fail, Retry};

Jobq\run(function (array $job): array {
    $payload = $job['payload'];
    if (!is_array($payload)) {
        throw new Discard('payload must be a JSON object');
    }
    // echo goes to stderr, which jobq keeps as the program's log.
    echo "job {$job['jobId']}, attempt {$job['attempt']} of {$job['maxAttempts']}\n";
    if (isset($payload['fail'])) {
        throw new Fail((string) $payload['fail']);
    }
    if (isset($payload['retry'])) {
        throw new Retry((string) $payload['retry'], '5s');
    }
    if (isset($payload['fanout'])) {
        if (!isset($job['deps'])) {
            // One after the other: each child waits for the one before it (by its key).
            $before = [];
            foreach ($payload['fanout'] as $name) {
                Jobq\spawn($job, 'hello', ['name' => $name], (string) $name, ['after' => $before]);
                $before = [(string) $name];
            }
            throw new AwaitChildren();
        }
        // Run again once the children have ended: their results are in deps.
        $greetings = array_map(fn (array $dep) => $dep['result']['greeting'], $job['deps']);
        sort($greetings);
        return ['greetings' => $greetings];
    }
    if (!empty($payload['progress'])) {
        foreach ([1, 2, 3] as $step) {
            Jobq\progress($job, $step * 25, "step $step of 3");
        }
    }
    return ['greeting' => 'hello ' . ($payload['name'] ?? 'world')];
});
