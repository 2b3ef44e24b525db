<?php
// A persistent jobq handler in PHP 8, with nothing beyond the bundled json extension.
//
// jobq starts the program once, writes one job (the envelope JSON) per line to its stdin and reads
// one reply per line from its stdout: protocol version 1, described in examples/handlers/README.md.
//
//   require __DIR__ . '/jobq_handler.php';
//   Jobq\run(fn (array $job) => ['greeting' => 'hello ' . $job['payload']['name']]);
//
// Returning is success (null: without a result); throwing Retry, Fail, Discard, Wait, Snooze,
// RateLimited or AwaitChildren gives another outcome; any other Throwable is a retry. Jobs run one
// at a time. Jobq\spawn($job, …) asks for a child job, written with a success or an AwaitChildren.
//
// stdout belongs to the protocol, and a stray line there makes jobq restart the process. So once
// this file is loaded, echo, print and PHP's own warnings go to stderr, the program's log; the
// replies alone are written to STDOUT, a stream the output buffer does not touch.

declare(strict_types=1);

namespace Jobq;

// Flushed on every write (chunk size 1), so the log keeps up with the program.
ob_start(static function (string $buffer): string {
    fwrite(STDERR, $buffer);
    return '';
}, 1);
ini_set('display_errors', 'stderr');

/** An answer other than success, thrown by a handler. */
class Outcome extends \Exception
{
    /** @var array<string, mixed> the reply's fields besides jobId */
    public array $reply;

    public function __construct(string $message, array $reply)
    {
        parent::__construct($message);
        $this->reply = array_filter($reply, static fn ($value) => $value !== null);
    }
}

/** Run the job again: after $delay ('30s', or seconds) if given, else after the back-off. */
class Retry extends Outcome
{
    public function __construct(string $error, string|int|float|null $delay = null)
    {
        parent::__construct($error, ['outcome' => 'retry', 'error' => $error, 'delay' => $delay]);
    }
}

/** The job can never succeed: it goes dead at once, whatever attempts remain. */
class Fail extends Outcome
{
    public function __construct(string $error)
    {
        parent::__construct($error, ['outcome' => 'fail', 'error' => $error]);
    }
}

/** The job should not run at all (obsolete, duplicate): it becomes discarded. */
class Discard extends Outcome
{
    public function __construct(string $reason)
    {
        parent::__construct($reason, ['outcome' => 'discard', 'reason' => $reason]);
    }
}

/** The work was handed to a third party; the job waits until `jobq resolve` finishes it. */
class Wait extends Outcome
{
    public function __construct()
    {
        parent::__construct('waiting', ['outcome' => 'wait']);
    }
}

/** Not now: start the job again after $delay, without spending an attempt. */
class Snooze extends Outcome
{
    public function __construct(string|int|float $delay)
    {
        parent::__construct("snoozed for $delay", ['outcome' => 'snooze', 'delay' => $delay]);
    }
}

/** Upstream back-pressure: jobs of this type pause for $delay (or the back-off). */
class RateLimited extends Outcome
{
    public function __construct(string|int|float|null $delay = null)
    {
        parent::__construct('rate limited', ['outcome' => 'rate-limited', 'delay' => $delay]);
    }
}

/**
 * Wait for the children spawned by this run; the job then runs again with their outcomes in
 * $job['deps'] (each child's jobId, status and result), without having spent an attempt.
 */
class AwaitChildren extends Outcome
{
    public function __construct()
    {
        parent::__construct('awaiting its children', ['outcome' => 'await-children']);
    }
}

/** The children each job asked for, by job id, sent with its outcome. */
final class Spawned
{
    /** @var array<string, list<array<string, mixed>>> */
    public static array $children = [];
}

/**
 * Asks for a child job of $type, written with this run's outcome if it succeeds or throws
 * AwaitChildren. Its id is the job's id . '.' . $key (or its place among this run's children), so a
 * run that happens again spawns nothing twice. $options are enqueue options of the job JSON (queue,
 * priority, runAt, maxAttempts, uniqueKey, timeoutMs, expiresAt, meta), and 'after': the keys of siblings it
 * waits for (['extract'], or [['key' => 'extract', 'on' => 'finish']]).
 */
function spawn(array $job, string $type, mixed $payload = null, ?string $key = null, array $options = []): void
{
    $child = ['type' => $type, 'payload' => $payload] + $options;
    if ($key !== null) {
        $child['key'] = $key;
    }
    Spawned::$children[$job['jobId']][] = $child;
}

/** Reports how far $job has come (0-100); any number of times before its outcome. */
function progress(array $job, int|float $percent, ?string $message = null): void
{
    $line = ['jobId' => $job['jobId'], 'progress' => $percent];
    send(encode($message === null ? $line : $line + ['message' => $message]));
}

/** Answers the jobs read from stdin, one at a time, until it closes; then returns. */
function run(callable $handle): void
{
    while (($line = fgets(STDIN)) !== false) {
        $message = json_decode($line, true, 512, JSON_THROW_ON_ERROR);
        // One at a time, a job is answered before its drop is read; jobq ignores the drop's answer.
        if (!isset($message['drop'])) {
            send(answer($handle, $message));
        }
    }
}

/** Runs one job and returns its one outcome line, whatever the handler does. */
function answer(callable $handle, array $job): string
{
    try {
        try {
            $result = $handle($job);
            $reply = ['outcome' => 'success'];
            if ($result !== null) {
                $reply['result'] = $result;
            }
        } catch (Outcome $outcome) {
            $reply = $outcome->reply;
        }
        $children = Spawned::$children[$job['jobId']] ?? [];
        unset(Spawned::$children[$job['jobId']]);
        if ($children !== []) {
            $reply['spawn'] = $children;
        }
        // Inside the try: a result JSON cannot hold (NAN, invalid UTF-8) is the handler's error.
        return encode(['jobId' => $job['jobId']] + $reply);
    } catch (\Throwable $e) {
        unset(Spawned::$children[$job['jobId']]);
        fwrite(STDERR, "$e\n");
        $error = get_class($e) . ($e->getMessage() === '' ? '' : ': ' . $e->getMessage());
        // Error text is for people: bytes that are not UTF-8 become U+FFFD, not a second error.
        $reply = ['jobId' => $job['jobId'], 'outcome' => 'retry', 'error' => $error];
        return encode($reply, JSON_INVALID_UTF8_SUBSTITUTE);
    }
}

function encode(array $message, int $flags = 0): string
{
    $flags |= JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE;
    return json_encode($message, $flags);
}

function send(string $line): void
{
    fwrite(STDOUT, $line . "\n");
    fflush(STDOUT);
}
