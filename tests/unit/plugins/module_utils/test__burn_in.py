"""The burn-in (F27): its load loop, its figures and its verdict; the HTTP side against a real local server."""

from __future__ import annotations

import http.server
import itertools
import json
import threading
import time

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _burn_in
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._burn_in import Sample, Stall

STARTED = 1_764_950_400.0  # 2025-12-05 16:00:00 UTC


def steady(count: int, every: float, tokens: int = 16) -> list[Sample]:
    """count requests, one ending every `every` seconds, each 0.5 s long."""
    return [Sample(i * every, i * every + 0.5, tokens) for i in range(1, count + 1)]


@pytest.mark.parametrize("values, share, expected", [
    ([], 0.5, 0.0),
    ([3.0], 0.99, 3.0),
    ([1.0, 2.0, 3.0, 4.0], 0.5, 2.0),
    ([4.0, 1.0, 3.0, 2.0], 0.9, 4.0),
    (list(range(1, 101)), 0.99, 99),
])
def test_percentile_is_the_nearest_rank(values, share, expected):
    assert _burn_in.percentile(values, share) == expected


def test_windows_spread_each_requests_tokens_over_its_time_and_count_only_full_windows():
    samples = [Sample(0, 10, 20), Sample(5, 15, 20), Sample(15, 25, 40), Sample(5, 12, 5, "boom")]
    # 25.5 s in 10 s windows: two full ones; the failed request and the partial third window do not count
    assert _burn_in.windows(samples, 25.5, 10) == [3.0, 3.0]


def test_requests_that_end_in_waves_are_a_steady_load():
    """Equal requests (ignore_eos) sent together end together: counted where they end, a window would hold one wave
    or two, and a steady cluster would read as falling."""
    latency, duration = 30.0, 120.0
    samples = [Sample(start, start + latency, 128) for _slot in range(8)
               for start in [n * latency for n in range(int(duration // latency) + 1)]]
    summary = _burn_in.summarize(samples, samples[-1].ended, 20, STARTED, duration)
    assert len(summary["windows_tokens_per_s"]) == 6  # the windows of the duration, not of the last request's end
    assert _burn_in.verdict(summary, "spark-1", 120, 0.3)["passed"]


def test_summary_names_the_first_failure_with_its_wall_clock():
    samples = steady(10, 1.0) + [Sample(7.0, 11.0, 0, "RuntimeError: HTTP 500", False, 3),
                                 Sample(8.0, 12.0, 0, "RuntimeError: later", False, 2)]
    summary = _burn_in.summarize(samples, 12.0, 4, STARTED)
    assert (summary["requests"], summary["answered"], summary["failed"], summary["tokens"]) == (12, 10, 2, 160)
    assert summary["first_failure"] == {"sent_s": 7.0, "at_s": 11.0, "stalled": False,
                                        "error": "RuntimeError: HTTP 500", "clock": "16:00:11", "in_flight": 3}
    assert summary["latency_s"] == {"p50": 0.5, "p90": 0.5, "p99": 0.5, "max": 0.5}
    # a stall is dated by when its request was sent: that is when the engine stopped answering
    stalled = _burn_in.summarize([Sample(30.0, 50.0, 0, "no answer within 20 s", True, 2)], 50.0, 10, STARTED)
    assert stalled["first_failure"]["clock"] == "16:00:30"


@pytest.mark.parametrize("case, samples, elapsed, passed, starts", [
    ("steady", steady(60, 1.0), 60.5, True, None),
    ("too short to judge a trend", steady(15, 1.0), 15.5, True, None),
    ("a stall", steady(20, 1.0) + [Sample(21.0, 41.0, 0, "no answer within 20 s", True, 2)], 41.0, False,
     "[F27] spark-1: a burn-in request sent 21 s in (16:00:21 UTC) had no answer within 20 s (2 in flight when it "
     "timed out)"),
    ("an error", steady(5, 1.0) + [Sample(5.5, 6.0, 0, "RuntimeError: HTTP 500 Internal Server Error: boom")], 6.0,
     False, "[F27] spark-1: 1 of 6 burn-in requests failed, the first 6 s in (16:00:06 UTC): RuntimeError: HTTP 500"),
    ("nothing answered", [], 30.0, False, "[F27] spark-1: no burn-in request was answered in 30 s"),
    ("falling", steady(40, 1.0) + [Sample(40 + i * 4.0, 40.5 + i * 4.0, 16) for i in range(1, 6)], 60.5, False,
     "[F27] spark-1: burn-in throughput fell from 15.2 tokens/s (median of the first windows) to 3.2 tokens/s in the "
     "last 10 s window, a drop of 79%, more than burn_in_max_drop=30%"),
])
def test_verdict(case, samples, elapsed, passed, starts):
    result = _burn_in.verdict(_burn_in.summarize(samples, elapsed, 10, STARTED), "spark-1", 20, 0.3, "GUIDE")
    assert result["passed"] is passed, case
    if passed:
        assert result["problem"] == ""
    else:
        assert result["problem"].startswith(starts), result["problem"]
        assert result["problem"].endswith("See GUIDE#f27")


def test_a_slow_decline_is_judged_against_the_start_of_the_run():
    """From 100 to 50 tokens/s over 20 windows: against the median of every earlier window (~75) the last one fell by
    a third only; against the first third of the run it halved."""
    rates = [100 - 50 * i / 19 for i in range(20)]
    samples = [Sample(i * 10.0, i * 10.0 + 10.0, round(rate * 10)) for i, rate in enumerate(rates)]
    result = _burn_in.verdict(_burn_in.summarize(samples, 200.0, 10, STARTED, 200.0), "spark-1", 20, 0.4)
    assert not result["passed"] and result["drop"] == pytest.approx(0.465, abs=0.01)


def test_a_request_without_length_counts_in_its_window():
    assert _burn_in.windows([Sample(5.0, 5.0, 30)], 20.0, 10) == [3.0, 0.0]


def test_a_drop_within_the_limit_passes_and_is_shown():
    samples = steady(40, 1.0) + [Sample(40 + i * 1.25, 40.5 + i * 1.25, 16) for i in range(1, 17)]
    summary = _burn_in.summarize(samples, 60.5, 10, STARTED)
    result = _burn_in.verdict(summary, "spark-1", 20, 0.3)
    assert result["passed"] and result["drop"] == pytest.approx(0.158)
    lines = _burn_in.table(summary, {"model": "tiny", "url": "http://h:8000", "concurrency": 2, "max_tokens": 16},
                           result)
    assert lines[0] == "burn-in of tiny at http://h:8000: 60.5 s of 2 concurrent requests, 16 tokens each"
    assert lines[3] == "tokens/s per 10 s window: 14.4 16 16 16 12.8 12.8, last window -16% against the first windows"
    assert lines[-1] == "passed"


def test_run_keeps_the_requests_in_flight_and_stops_at_the_first_failure():
    calls, numbers = [], itertools.count(1)

    def send(index, timeout):
        calls.append(index)
        this = next(numbers)  # one number per call, whichever thread asks
        time.sleep(0.01)
        if this == 30:
            raise RuntimeError("HTTP 500")
        return 4

    samples, elapsed = _burn_in.run(send, 3, 10.0, 1.0)
    assert elapsed < 5, "the burn-in went on after the failure"
    assert [sample.error for sample in samples if sample.error] == ["RuntimeError: HTTP 500"]
    assert sorted(set(calls)) == list(range(len(_burn_in.PROMPTS)))  # the prompts in turn
    assert all(sample.tokens == 4 for sample in samples if not sample.error)


def test_run_ends_after_its_duration_and_a_stall_is_marked():
    samples, elapsed = _burn_in.run(lambda index, timeout: time.sleep(0.05) or 2, 2, 0.5, 1.0)
    assert 0.5 <= elapsed < 1.5 and samples and not any(sample.error for sample in samples)

    def stuck(index, timeout):
        raise Stall("no answer within 1 s")

    samples, _elapsed = _burn_in.run(stuck, 2, 5.0, 1.0)
    assert samples[0].stalled and samples[0].error == "no answer within 1 s"


def test_a_request_that_outlasts_its_deadline_is_a_stall_whatever_the_client_does():
    """An HTTP client's timeout bounds each read: a server that trickles bytes never trips it."""
    samples, elapsed = _burn_in.run(lambda index, timeout: time.sleep(10) or 1, 2, 5.0, 0.5)
    assert elapsed < 3 and samples[0].stalled and samples[0].error == "no answer within 0.5 s"
    assert samples[0].in_flight == 2


class Server(http.server.BaseHTTPRequestHandler):
    """vLLM's /v1/completions as the burn-in sees it; the prompt picks the behaviour."""
    seen: list[dict] = []

    def do_POST(self):  # noqa: N802  (the base class's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Server.seen.append({"auth": self.headers.get("Authorization"), **body})
        mode = Server.mode
        if mode == "slow":
            time.sleep(1.5)
        if mode.startswith("redirect"):
            self.send_response(int(mode[-3:]))
            self.send_header("Location", "http://127.0.0.1:9/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        status, answer = {"ok": (200, {"usage": {"completion_tokens": body["max_tokens"]}}),
                          "slow": (200, {"usage": {"completion_tokens": 1}}),
                          "refused": (401, {"error": "Unauthorized"}),
                          "empty": (200, {"usage": {"completion_tokens": 0}})}[mode]
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture()
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Server)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    Server.seen = []
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("mode, raised, text", [
    ("ok", None, None),
    ("refused", RuntimeError, 'HTTP 401 Unauthorized: {"error": "Unauthorized"}'),
    ("empty", RuntimeError, "an answer without tokens"),
    ("slow", Stall, "no answer within 0.5 s"),
    # 301-303 would be followed as a GET with the Authorization header copied to the new host
    ("redirect-301", RuntimeError, "HTTP 301 redirected to http://127.0.0.1:9/elsewhere, not followed"),
    ("redirect-302", RuntimeError, "HTTP 302 redirected to http://127.0.0.1:9/elsewhere, not followed"),
    ("redirect-303", RuntimeError, "HTTP 303 redirected to http://127.0.0.1:9/elsewhere, not followed"),
    ("redirect-307", RuntimeError, "HTTP 307 redirected to http://127.0.0.1:9/elsewhere, not followed"),
])
def test_http_sender_against_a_real_server(server, mode, raised, text, monkeypatch):
    # a proxy in the environment is not used: it would see the key
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    Server.mode = mode
    send = _burn_in.http_sender(server, "tiny", "key-1", 7)
    if raised is None:
        assert send(8, 5.0) == 7
        assert Server.seen[0] == {"auth": "Bearer key-1", "model": "tiny", "prompt": _burn_in.PROMPTS[2],
                                  "max_tokens": 7, "ignore_eos": True, "temperature": 0}
        return
    with pytest.raises(raised, match=text):
        send(0, 0.5)


def test_http_sender_takes_only_http_urls():
    with pytest.raises(ValueError, match="file:///etc/passwd is no http:// or https:// URL"):
        _burn_in.http_sender("file:///etc/passwd", "tiny", "", 4)


def test_http_sender_names_an_unreachable_server():
    send = _burn_in.http_sender("http://127.0.0.1:9", "tiny", "", 4)
    with pytest.raises(RuntimeError, match="http://127.0.0.1:9 unreachable"):
        send(0, 1.0)


def test_a_record_is_read_back_only_in_the_form_the_role_writes(tmp_path):
    from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _records
    record = {"version": 1, "began": "2026-12-05T16:00:00Z", "summary": {}, "settings": {},
              "verdict": {"passed": True, "drop": 0.0, "problem": ""}, "table": ["a", "passed"]}
    path = tmp_path / "burn-in.json"
    path.write_text(json.dumps(record))
    assert _records.read(str(path), "burn_in") == record
    for broken in ("{", json.dumps(dict(record, version=2)), json.dumps(dict(record, table="a")),
                   json.dumps(dict(record, verdict={"passed": "yes", "problem": ""})),
                   json.dumps(dict(record, verdict={"passed": False})),
                   json.dumps(dict(record, verdict={"passed": False, "problem": ""})), json.dumps([record])):
        path.write_text(broken)
        assert _records.read(str(path), "burn_in") == {}, broken
    assert _records.read(str(tmp_path / "missing.json"), "burn_in") == {}
