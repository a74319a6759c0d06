# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The burn-in (F27): concurrent requests against the serving API for a while, and whether the cluster held up.

A cluster that passed validate and one smoke completion can still fail under load: a rank that stops computing while
/health stays 200, a hang that comes after minutes (NCCL builds that differ), throughput that sinks as memory leaks.
The burn-in sends `concurrency` requests at a time for `duration` seconds, each asking for exactly `max_tokens` tokens
(vLLM's ignore_eos, so every request costs the same), and fails on the first error, on a request without an answer
within `request_timeout` (a stall), or on throughput that fell by more than `max_drop` between the first windows and
the last. The load loop takes its request function as an argument: the module gives it HTTP, the unit tests a fake.
Private to the collection."""

from __future__ import annotations

import json
import math
import socket
import statistics
import threading
import time
import typing as t
import urllib.error
import urllib.parse
import urllib.request

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._guide import TROUBLESHOOTING

# A fixed prompt set: the same work in every burn-in, so that two runs compare.
PROMPTS = (
    "Explain in one paragraph why tensor parallelism needs a fast interconnect.",
    "List three things to check when a distributed inference server stops answering.",
    "Write a short poem about two computers sharing one model.",
    "Summarise what a key-value cache stores during text generation.",
    "Describe the difference between latency and throughput for a language model server.",
    "Give four tips for keeping a GPU server cool under sustained load.",
)

# Throughput is judged only with this many full windows: fewer, and one slow window is noise, not a trend.
MIN_WINDOWS = 3

MESSAGES = {
    "ERRORS": "[F27] {host}: {failed} of {requests} burn-in requests failed, the first {at:.0f} s in ({clock} UTC): "
              "{error}. The cluster served the smoke completion but not sustained load. Fix: read each rank's log "
              "(`docker logs` of the vLLM container on the head and, under the mp backend, on every node; Ray's worker "
              "logs under the Ray backend), run playbooks/diagnose.yml, then restart the group (site.yml --tags vllm "
              "-e vllm_cluster_restart=true). See {doc}#f27",
    "STALL": "[F27] {host}: a burn-in request sent {at:.0f} s in ({clock} UTC) had no answer within {timeout} s "
             "({pending} in flight when it timed out): the engine stopped generating. /health can still answer while a rank is "
             "stuck (a stopped or hung process, a collective waiting on a peer, NCCL builds that differ between the "
             "nodes after minutes of load). Fix: run playbooks/diagnose.yml and `site.yml --tags validate` (a dead "
             "rank is named there), read each rank's log, then restart the group (site.yml --tags vllm -e "
             "vllm_cluster_restart=true). See {doc}#f27",
    "FALLING": "[F27] {host}: burn-in throughput fell from {first:.1f} tokens/s (median of the first windows) to "
               "{last:.1f} tokens/s in the last {window} s window, a drop of {drop:.0%}, more than "
               "burn_in_max_drop={max_drop:.0%}: the cluster slows under sustained load (memory pressure, a thermal "
               "or power limit, a degrading link). Fix: watch `nvidia-smi` and free memory on each node during a "
               "burn-in, run site.yml --tags link to measure the interconnect again, then run the burn-in again. "
               "See {doc}#f27",
    "NOTHING": "[F27] {host}: no burn-in request was answered in {elapsed:.0f} s: the server took requests but "
               "returned none. Fix: run `site.yml --tags validate` and playbooks/diagnose.yml. See {doc}#f27",
    "CHECK_MODE": "would keep {concurrency} requests of {max_tokens} tokens in flight against {url} for {duration} s",
}


class Sample(t.NamedTuple):
    """One request: when it was sent and ended (seconds since the burn-in began), the tokens it returned, its error
    ("" when it succeeded), whether that error was a missed deadline, and how many requests were in flight when it
    ended (itself included)."""
    sent: float
    ended: float
    tokens: int
    error: str = ""
    stalled: bool = False
    in_flight: int = 1


class Stall(Exception):
    """A request had no answer within its deadline."""


def percentile(values: t.Sequence[float], share: float) -> float:
    """Nearest-rank percentile (share in 0..1) of values; 0.0 for none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def windows(samples: t.Iterable[Sample], elapsed: float, width: float) -> list[float]:
    """Tokens per second in each full window of `width` seconds within `elapsed`. A request's tokens are spread over
    the time it took: requests of equal length end in waves, and counting them where they end would make a steady
    load look uneven whenever a request takes about as long as a window."""
    count = int(elapsed // width) if width > 0 else 0
    tokens = [0.0] * count
    for sample in samples:
        if sample.error or sample.tokens <= 0:
            continue
        if sample.ended <= sample.sent:
            if int(sample.sent // width) < count:
                tokens[int(sample.sent // width)] += sample.tokens
            continue
        span = sample.ended - sample.sent
        first, last = int(sample.sent // width), int(sample.ended // width)
        for index in range(first, min(last, count - 1) + 1):
            overlap = min(sample.ended, (index + 1) * width) - max(sample.sent, index * width)
            tokens[index] += sample.tokens * max(overlap, 0.0) / span
    return [round(total / width, 2) for total in tokens]


def summarize(samples: t.Sequence[Sample], elapsed: float, width: float, started: float,
              duration: float | None = None) -> dict[str, t.Any]:
    """The figures of a burn-in: counts, throughput, latency percentiles, per-window throughput, the first failure.
    `started` is the wall clock (epoch seconds) at which the burn-in began, to say when a failure happened; windows
    end with `duration` (after it no request is sent: the load is no longer full)."""
    answered = [sample for sample in samples if not sample.error]
    failed = sorted((sample for sample in samples if sample.error), key=lambda sample: sample.ended)
    latencies = [sample.ended - sample.sent for sample in answered]
    tokens = sum(sample.tokens for sample in answered)
    first = failed[0] if failed else None
    return {
        "elapsed_s": round(elapsed, 1),
        "requests": len(samples),
        "answered": len(answered),
        "failed": len(failed),
        "tokens": tokens,
        "tokens_per_s": round(tokens / elapsed, 2) if elapsed > 0 else 0.0,
        "requests_per_s": round(len(answered) / elapsed, 3) if elapsed > 0 else 0.0,
        "latency_s": {name: round(percentile(latencies, share), 3)
                      for name, share in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0))},
        "window_s": width,
        "windows_tokens_per_s": windows(samples, min(elapsed, duration if duration is not None else elapsed), width),
        "first_failure": None if first is None else {
            "sent_s": round(first.sent, 1), "at_s": round(first.ended, 1), "stalled": first.stalled,
            "error": first.error[:300],
            "clock": time.strftime("%H:%M:%S", time.gmtime(started + (first.sent if first.stalled else first.ended))),
            "in_flight": first.in_flight,
        },
    }


def verdict(summary: t.Mapping[str, t.Any], host: str, request_timeout: float, max_drop: float,
            doc: str = TROUBLESHOOTING) -> dict[str, t.Any]:
    """{passed, problem, drop}: the first of a stall, errors, no answer at all, or falling throughput."""
    failure = summary.get("first_failure")
    if failure and failure["stalled"]:
        return {"passed": False, "drop": None, "problem": MESSAGES["STALL"].format(
            host=host, at=failure["sent_s"], clock=failure["clock"], timeout=_number(request_timeout),
            pending=failure["in_flight"], doc=doc)}
    if failure:
        return {"passed": False, "drop": None, "problem": MESSAGES["ERRORS"].format(
            host=host, failed=summary["failed"], requests=summary["requests"], at=failure["at_s"],
            clock=failure["clock"], error=failure["error"], doc=doc)}
    if summary["answered"] == 0:
        return {"passed": False, "drop": None, "problem": MESSAGES["NOTHING"].format(
            host=host, elapsed=summary["elapsed_s"], doc=doc)}
    rates = summary["windows_tokens_per_s"]
    if len(rates) < MIN_WINDOWS:
        return {"passed": True, "drop": None, "problem": ""}
    # the first third of the run (at least two windows): a slow decline would drag a median of every earlier window
    # down with it
    first = statistics.median(rates[:max(MIN_WINDOWS - 1, len(rates) // 3)])
    last = rates[-1]
    drop = round(1 - last / first, 3) if first > 0 else 0.0
    if drop > max_drop:
        return {"passed": False, "drop": drop, "problem": MESSAGES["FALLING"].format(
            host=host, first=first, last=last, window=_number(summary["window_s"]), drop=drop, max_drop=max_drop,
            doc=doc)}
    return {"passed": True, "drop": drop, "problem": ""}


# The record's form (vllm_cluster_records_dir/burn-in.json, written by the burn_in role); diagnose reads it.
RECORD_VERSION = 1


def valid_record(document: t.Any) -> dict[str, t.Any]:
    """A record as the burn_in role writes it, else {} (a hand-edited or truncated file reads as no record)."""
    if not isinstance(document, dict) or document.get("version") != RECORD_VERSION:
        return {}
    shapes = {"began": str, "summary": dict, "verdict": dict, "table": list, "settings": dict}
    if any(not isinstance(document.get(key), kind) for key, kind in shapes.items()):
        return {}
    verdict = document["verdict"]
    if not isinstance(verdict.get("passed"), bool) or not isinstance(verdict.get("problem"), str):
        return {}
    if not verdict["passed"] and not verdict["problem"]:
        return {}
    if not all(isinstance(line, str) for line in document["table"]):
        return {}
    return document


def table(summary: t.Mapping[str, t.Any], settings: t.Mapping[str, t.Any], result: t.Mapping[str, t.Any]) -> list[str]:
    """The burn-in's figures as the play prints them, a line each."""
    latency = summary["latency_s"]
    rates = " ".join(f"{rate:g}" for rate in summary["windows_tokens_per_s"]) or "(no full window)"
    drop = "" if result.get("drop") is None else f", last window {-result['drop'] + 0.0:+.0%} against the first windows"
    return [
        f"burn-in of {settings['model']} at {settings['url']}: {summary['elapsed_s']:g} s of "
        f"{settings['concurrency']} concurrent requests, {settings['max_tokens']} tokens each",
        f"requests {summary['requests']} ({summary['failed']} failed), tokens {summary['tokens']}, "
        f"{summary['tokens_per_s']:g} tokens/s, {summary['requests_per_s']:g} requests/s",
        f"latency p50 {latency['p50']:g} s, p90 {latency['p90']:g} s, p99 {latency['p99']:g} s, max {latency['max']:g} s",
        f"tokens/s per {_number(summary['window_s'])} s window: {rates}{drop}",
        "passed" if result["passed"] else "FAILED",
    ]


def run(send: t.Callable[[int, float], int], concurrency: int, duration: float, request_timeout: float,
        clock: t.Callable[[], float] = time.monotonic) -> tuple[list[Sample], float]:
    """Keep `concurrency` requests in flight for `duration` seconds; stop at the first failure. `send(prompt_index,
    timeout)` returns the tokens of one answer, raises Stall on a missed deadline and any other exception on an
    error. A request still without an answer `request_timeout` seconds after it went out is a stall whatever `send`
    does (an HTTP client's timeout bounds each read, not the whole answer). Returns the samples and the seconds the
    burn-in ran (to the first failure, or until the last request sent in time has ended)."""
    began = clock()
    samples: list[Sample] = []
    lock = threading.Lock()
    stop = threading.Event()
    sent = [0]
    in_flight: dict[int, float] = {}  # request number -> when it went out (seconds since began)

    def record(number: int, sample: Sample) -> None:
        # under the lock; a request already judged (a stall the watcher recorded) is not recorded twice
        if in_flight.pop(number, None) is not None:
            samples.append(sample)
            if sample.error:
                stop.set()

    def worker() -> None:
        while not stop.is_set() and clock() - began < duration:
            with lock:
                number = sent[0]
                sent[0] += 1
                start = in_flight[number] = clock() - began
            try:
                tokens, error, stalled = send(number % len(PROMPTS), request_timeout), "", False
            except Stall as missed:
                tokens, error, stalled = 0, str(missed) or _no_answer(request_timeout), True
            except Exception as failure:  # pylint: disable=broad-except  # any error ends the burn-in, named
                tokens, error, stalled = 0, f"{type(failure).__name__}: {failure}", False
            with lock:
                record(number, Sample(start, clock() - began, tokens, error, stalled, len(in_flight)))

    threads = [threading.Thread(target=worker, daemon=True) for _index in range(max(1, concurrency))]
    for thread in threads:
        thread.start()
    while any(thread.is_alive() for thread in threads) and not stop.is_set():
        stop.wait(0.2)
        with lock:
            now = clock() - began
            late = sorted((sent_at, number) for number, sent_at in in_flight.items()
                          if now - sent_at > request_timeout + 1)
            if late:
                sent_at, number = late[0]
                record(number, Sample(sent_at, now, 0, _no_answer(request_timeout), True,
                                      len(in_flight)))
    # a failure ends the burn-in at once: requests still in flight are not waited for (each ends by its own deadline)
    with lock:
        if not stop.is_set():
            # every worker ended without recording what it had in flight (a worker killed by what no handler takes):
            # an answer never seen is no pass
            now = clock() - began
            for number, sent_at in sorted(in_flight.items(), key=lambda item: item[1]):
                record(number, Sample(sent_at, now, 0, "the request's worker ended without an answer", False,
                                      len(in_flight)))
        done = list(samples)
    ended = max((sample.ended for sample in done), default=clock() - began)
    return done, min(ended, clock() - began)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is an error: the API key would follow it to wherever it points."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D102  (the base class's signature)
        raise urllib.error.HTTPError(req.full_url, code, f"redirected to {newurl}, not followed", headers, fp)


def http_sender(url: str, model: str, api_key: str, max_tokens: int) -> t.Callable[[int, float], int]:
    """send(prompt_index, timeout) for run(): one completion from vLLM's OpenAI API at url (no /v1), exactly
    max_tokens long (ignore_eos), its tokens from the answer's usage. Straight to the server: no proxy from the
    environment (it would see the key and add its own stalls), no redirect followed."""
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        raise ValueError(f"{url} is no http:// or https:// URL")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())

    def send(index: int, timeout: float) -> int:
        body = json.dumps({"model": model, "prompt": PROMPTS[index % len(PROMPTS)], "max_tokens": max_tokens,
                           "ignore_eos": True, "temperature": 0}).encode()
        headers = {"Content-Type": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        request = urllib.request.Request(f"{url}/v1/completions", data=body, headers=headers, method="POST")
        try:
            with opener.open(request, timeout=timeout) as answer:
                payload = json.loads(answer.read().decode("utf-8", "replace"))
        except urllib.error.HTTPError as refused:
            try:
                text = " ".join(refused.read().decode("utf-8", "replace").split())[:200]
            except OSError:  # headers came, the body stalled or broke: the status says enough
                text = "(no body)"
            finally:
                refused.close()
            raise RuntimeError(f"HTTP {refused.code} {refused.reason}: {text}") from None
        except (TimeoutError, socket.timeout) as missed:
            raise Stall(_no_answer(timeout)) from missed
        except urllib.error.URLError as failure:
            if isinstance(failure.reason, (TimeoutError, socket.timeout)):
                raise Stall(_no_answer(timeout)) from failure
            raise RuntimeError(f"{url} unreachable: {failure.reason}") from None
        tokens = int((payload.get("usage") or {}).get("completion_tokens") or 0)
        if tokens < 1:
            raise RuntimeError(f"an answer without tokens: {json.dumps(payload)[:200]}")
        return tokens

    return send


def _no_answer(timeout: float) -> str:
    """What a stalled request's error says, wherever the stall is seen (the client, the watcher)."""
    return f"no answer within {_number(timeout)} s"


def _number(value: float) -> str:
    return f"{value:g}"
