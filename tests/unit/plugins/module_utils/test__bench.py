"""The benchmark (F30): the container's program (run for real by sh against a stand-in `vllm` on PATH), reading its
output back, and the judgement of a run against the baseline."""

from __future__ import annotations

import json
import os
import stat
import subprocess

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _bench
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._bench import BenchError

SETTINGS = {"concurrencies": [1, 4], "input_len": 32, "output_len": 16, "prompts_per_concurrency": 4}


def result(concurrency: int, throughput: float, failed: int = 0, **extra) -> dict:
    document = {"max_concurrency": concurrency, "completed": 4 * concurrency - failed, "failed": failed,
                "total_output_tokens": 64 * concurrency, "duration": 1.5, "request_throughput": throughput / 16,
                "output_throughput": throughput, "p50_ttft_ms": 18.0, "p90_ttft_ms": 20.5, "p99_ttft_ms": 22.0,
                "p50_tpot_ms": 12.0, "p90_tpot_ms": 13.0, "p99_tpot_ms": 14.25, "latencies": [0.1] * 4,
                "date": "20261206-041200"}
    document.update(extra)
    return document


def record(rows: list[dict], settings: dict | None = None, **version) -> dict:
    return {"version": 1, "date": "2026-12-06T04:12:00Z", "model": "tiny-llama", "settings": dict(settings or SETTINGS),
            "version_info": {"image": "lab/runtime:1", "image_id": "sha256:" + "ab" * 32, "vllm_version": "0.32.0",
                             "model_revision": "main", **version},
            "rows": [_bench.figures(row) for row in rows]}


@pytest.mark.parametrize("values, expected", [
    ([1, 4, 16], [1, 4, 16]),
    ("1,4, 16", [1, 4, 16]),
    (["2"], [2]),
])
def test_concurrencies_are_positive_integers_in_order(values, expected):
    assert _bench.concurrency_list(values) == expected


@pytest.mark.parametrize("values", [[], "", [0], [-1], ["x"], [1, 1], [True], None, [1.5], "1;rm -rf /"])
def test_other_concurrencies_are_refused(values):
    with pytest.raises(BenchError):
        _bench.concurrency_list(values)


def test_the_figures_keep_only_the_numbers_compared_and_refuse_what_is_not_one():
    row = _bench.figures(result(4, 252.55))
    assert row["output_throughput"] == 252.55 and row["max_concurrency"] == 4
    assert "latencies" not in row and "date" not in row
    for name, bad in (("output_throughput", "fast"), ("failed", -1), ("p99_tpot_ms", float("nan")),
                      ("completed", True), ("max_concurrency", 0), ("duration", None)):
        with pytest.raises(BenchError):
            _bench.figures(result(4, 252.55, **{name: bad}))


def test_the_output_is_read_by_its_marks_and_anything_else_is_ignored():
    lines = ["INFO vllm bench serve starting", _bench.RESULT_MARK + json.dumps(result(1, 78.2)),
             "noise " + _bench.RESULT_MARK + json.dumps(result(4, 252.5)),
             _bench.RESULT_MARK + "{not json", _bench.RESULT_MARK + json.dumps(result(16, 1.0, output_throughput="x")), None, 7]
    rows = _bench.parse_output(lines)
    assert sorted(rows) == [1, 4]
    assert rows[4]["output_throughput"] == 252.5


def test_a_concurrency_without_a_result_or_with_failed_requests_is_a_problem_naming_it():
    rows = {1: _bench.figures(result(1, 78.2)), 4: _bench.figures(result(4, 250.0, failed=3))}
    found = _bench.problems(rows, [1, 4, 16], "spark-1", 1, ["a", "Connection refused", ""])
    assert len(found) == 2
    assert "3 of 16 benchmark requests failed at concurrency 4" in found[0]
    assert "no result for concurrency 16 (exit status 1)" in found[1] and "Connection refused" in found[1]
    assert all(message.startswith("[F30] spark-1") for message in found)
    assert _bench.problems(rows, [1], "spark-1", 0, []) == []


@pytest.mark.parametrize("new, limit, passed, slowdown", [
    (250.0, 0.1, True, 0.0),       # the same
    (230.0, 0.1, True, 0.08),      # 8 % slower: within 10 %
    (200.0, 0.1, False, 0.2),      # 20 % slower
    (500.0, 0.1, True, -1.0),      # faster
    (200.0, 0.25, True, 0.2),      # a wider tolerance
])
def test_a_run_is_judged_by_output_throughput_against_the_baseline(new, limit, passed, slowdown):
    baseline = record([result(1, 80.0), result(4, 250.0)])
    run = record([result(1, 80.0), result(4, new)], image="lab/runtime:2")
    judged = _bench.verdict(run, baseline, limit, "spark-1")
    assert judged["passed"] is passed and judged["compared"] is True
    assert judged["slowdowns"][4] == pytest.approx(slowdown, abs=1e-3)
    if passed:
        assert judged["problem"] == ""
    else:
        assert "concurrency 4: 200.0 tokens/s against 250.0 (-20%)" in judged["problem"]
        assert "lab/runtime:1" in judged["problem"] and judged["problem"].startswith("[F30] spark-1")


@pytest.mark.parametrize("baseline, reason", [
    ({}, "no baseline"),
    (record([result(1, 80.0)], settings=dict(SETTINGS, output_len=64)), "other benchmark settings"),
])
def test_without_a_comparable_baseline_a_run_passes_and_says_why(baseline, reason):
    judged = _bench.verdict(record([result(1, 10.0)]), baseline, 0.1, "spark-1")
    assert judged["passed"] is True and judged["compared"] is False and reason in judged["reason"]


def test_the_table_puts_each_baseline_row_under_the_run():
    baseline = record([result(1, 80.0), result(4, 250.0)])
    lines = _bench.table(record([result(1, 70.0), result(4, 240.0)], image="lab/runtime:2"), baseline)
    assert lines[0].startswith("benchmark of tiny-llama on lab/runtime:2")
    assert lines[1].startswith("baseline: lab/runtime:1")
    assert lines[3].startswith("   1 | 4.38 | 70.0 | 18.0/20.5/22.0 | 12.0/13.0/14.2")
    assert lines[4].startswith("  baseline   1 | 5.00 | 80.0")
    assert len(lines) == 7


@pytest.mark.parametrize("mutate", [
    lambda doc: doc.update(version=2),
    lambda doc: doc.update(rows=[]),
    lambda doc: doc.update(rows=[{"max_concurrency": 1}]),
    lambda doc: doc.pop("settings"),
    lambda doc: doc.update(version_info="x"),
])
def test_a_record_not_of_the_roles_form_reads_as_none(mutate):
    document = record([result(1, 80.0)])
    assert _bench.valid_record(json.loads(json.dumps(document))) == document
    mutate(document)
    assert _bench.valid_record(document) == {}


def _fake_vllm(directory, behaviour: str) -> None:
    """A `vllm` that writes a result file as `vllm bench serve --result-dir D --result-filename F` does."""
    script = directory / "vllm"
    script.write_text(
        "#!/bin/sh\n"
        'echo "args: $*" >> "$FAKE_LOG"; echo "key: ${OPENAI_API_KEY-unset}" >> "$FAKE_LOG"\n'
        'while [ $# -gt 0 ]; do case "$1" in --result-dir) dir=$2;; --result-filename) file=$2;; '
        '--max-concurrency) c=$2;; esac; shift; done\n'
        + behaviour)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def _run(tmp_path, behaviour, key_file="", concurrencies=(1, 4), revision="main"):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    _fake_vllm(bindir, behaviour)
    argv = _bench.script_args(dict(SETTINGS, concurrencies=list(concurrencies), key_file=key_file,
                                   url="http://198.18.0.180:8000", model="org/model", served_model_name="served $(id)",
                                   model_revision=revision))
    env = {"PATH": f"{bindir}:{os.environ['PATH']}", "FAKE_LOG": str(tmp_path / "log")}
    done = subprocess.run(["sh"] + argv, env=env, capture_output=True, text=True, check=False)
    return done, (tmp_path / "log").read_text() if (tmp_path / "log").exists() else ""


WRITES = ('printf \'{"max_concurrency": %s, "completed": 4, "failed": 0, "total_output_tokens": 64, "duration": 1, '
          '"request_throughput": 4, "output_throughput": 64, "p50_ttft_ms": 1, "p90_ttft_ms": 1, "p99_ttft_ms": 1, '
          '"p50_tpot_ms": 1, "p90_tpot_ms": 1, "p99_tpot_ms": 1}\' "$c" > "$dir/$file"\n')


def test_the_program_runs_one_benchmark_per_concurrency_and_prints_each_result_marked(tmp_path):
    key = tmp_path / "key"
    key.write_text("s3cret\n")
    done, log = _run(tmp_path, WRITES, key_file=str(key))
    assert done.returncode == 0, done.stderr
    rows = _bench.parse_output(done.stdout.splitlines())
    assert sorted(rows) == [1, 4]
    assert "key: s3cret" in log
    # the served name goes through as one argument, never through the shell
    assert "--served-model-name served $(id)" in log and "--num-prompts 16 --max-concurrency 4" in log
    assert "s3cret" not in done.stdout + done.stderr


def test_the_program_stops_at_the_first_failed_benchmark_with_its_status(tmp_path):
    done, log = _run(tmp_path, 'echo "Connection refused" >&2; exit 3\n')
    assert done.returncode == 3 and "Connection refused" in done.stderr
    assert log.count("args:") == 1
    assert _bench.parse_output(done.stdout.splitlines()) == {}


def test_the_program_refuses_to_run_without_the_key_it_was_told_to_read(tmp_path):
    done, log = _run(tmp_path, WRITES, key_file=str(tmp_path / "missing"))
    assert done.returncode == 78 and "missing or empty" in done.stderr and log == ""


@pytest.mark.parametrize("model, revision, expected", [
    ("org/model", "a" * 40, "/root/.cache/huggingface/hub/models--org--model/snapshots/" + "a" * 40),
    ("org/model", "main", ""),
    ("/models/local", "a" * 40, ""),
    ("org/model", "../" + "a" * 37, ""),
])
def test_a_model_pinned_to_a_commit_reads_its_tokenizer_from_the_staged_snapshot(model, revision, expected):
    assert _bench.tokenizer(model, revision) == expected


def test_the_program_passes_the_tokenizer_only_when_there_is_one(tmp_path):
    done, log = _run(tmp_path, WRITES, concurrencies=(1,))
    assert done.returncode == 0 and "--tokenizer" not in log


def test_the_program_reads_a_pinned_commits_tokenizer_from_its_snapshot(tmp_path):
    done, log = _run(tmp_path, WRITES, concurrencies=(1,), revision="b" * 40)
    assert done.returncode == 0
    assert "--tokenizer /root/.cache/huggingface/hub/models--org--model/snapshots/" + "b" * 40 in log
