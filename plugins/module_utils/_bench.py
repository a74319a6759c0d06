# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The benchmark (playbooks/bench.yml, role bench) and the upgrade's judgement by it (F30).

vLLM's own client, `vllm bench serve`, run from the serving image on the head against the running API, once per
concurrency, on random prompts of fixed length asking for exactly `output_len` tokens each (ignore_eos) with a fixed
seed: the same work in every run, so that two runs compare. What it wrote is read back from the container's output,
one marked JSON line per concurrency, and kept to the figures users compare: time to first token (TTFT), time per
output token (TPOT), request and output-token throughput. A run is judged against the cluster's baseline (the newest
accepted run) by output-token throughput at each concurrency both measured. Private to the collection."""

from __future__ import annotations

import json
import math
import re
import typing as t

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._guide import TROUBLESHOOTING

RECORD_VERSION = 1
# The line the container prints before each result file's JSON (vLLM's own output comes before and around it).
RESULT_MARK = "inferops-bench-result "
# What is kept of vLLM's result file: its per-request lists are not (they grow with the prompts).
INTEGER_FIELDS = ("max_concurrency", "completed", "failed", "total_output_tokens")
FLOAT_FIELDS = ("duration", "request_throughput", "output_throughput",
                "p50_ttft_ms", "p90_ttft_ms", "p99_ttft_ms", "p50_tpot_ms", "p90_tpot_ms", "p99_tpot_ms")

# The container's program: the API key from its root-only file (never on a command line or in the container's
# environment as Docker shows it), then one `vllm bench serve` per concurrency; each result file printed back marked.
SCRIPT = r"""
key_file=$1 base_url=$2 model=$3 served=$4 input_len=$5 output_len=$6 per=$7 tokenizer=$8
shift 8
if [ -n "$key_file" ]; then
  OPENAI_API_KEY="$(cat -- "$key_file")" && [ -n "$OPENAI_API_KEY" ] || { echo "bench: the API key file $key_file is missing or empty" >&2; exit 78; }
  export OPENAI_API_KEY
fi
mkdir -p /tmp/bench || exit 1
for concurrency in "$@"; do
  vllm bench serve --backend openai --base-url "$base_url" --model "$model" --served-model-name "$served" \
    --dataset-name random --random-input-len "$input_len" --random-output-len "$output_len" \
    --num-prompts "$((concurrency * per))" --max-concurrency "$concurrency" --ignore-eos --seed 0 \
    --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,90,99 --disable-tqdm \
    ${tokenizer:+--tokenizer "$tokenizer"} \
    --save-result --result-dir /tmp/bench --result-filename "c$concurrency.json" >&2 || exit $?
  python3 -I -c 'import json, sys; print(sys.argv[2] + json.dumps(json.load(open(sys.argv[1]))), flush=True)' \
    "/tmp/bench/c$concurrency.json" "RESULT_MARK" || exit 1
done
""".replace("RESULT_MARK", RESULT_MARK)

MESSAGES = {
    "NO_RESULT": "[F30] {host}: the benchmark gave no result for concurrency {concurrency} (exit status {status}): "
                 "{tail}. Fix: run `site.yml --tags validate`, then playbooks/bench.yml again. See {doc}#f30",
    "FAILED_REQUESTS": "[F30] {host}: {failed} of {total} benchmark requests failed at concurrency {concurrency}: the "
                       "cluster answers the smoke completion but not a benchmark's load. Fix: read the vLLM "
                       "container's log on the head, run playbooks/diagnose.yml. See {doc}#f30",
    "SLOWER": "[F30] {host}: output throughput fell by more than vllm_cluster_upgrade_max_slowdown={limit:.0%} against "
              "the baseline ({baseline}): {figures}. Fix: find what slows the new version (its release notes, "
              "`vllm_server_extra_args`, the image's kernels for this GPU), or raise the tolerance for this upgrade "
              "if the slowdown is expected. See {doc}#f30",
    "CHECK_MODE": (
        "would run vllm bench serve from {image} against {url} at concurrencies {concurrencies} ({prompts} prompts "
        "each per unit of concurrency, {input_len} tokens in, {output_len} out)"
    ),
}


class BenchError(ValueError):
    """The benchmark's output or settings cannot be read."""


def script_args(settings: t.Mapping[str, t.Any]) -> list[str]:
    """The container's command: sh -c SCRIPT with the settings as positional arguments (never spliced into the script)."""
    concurrencies = concurrency_list(settings["concurrencies"])
    return ["-c", SCRIPT, "bench", str(settings["key_file"]), str(settings["url"]), str(settings["model"]),
            str(settings["served_model_name"]), str(_positive(settings["input_len"], "input_len")),
            str(_positive(settings["output_len"], "output_len")),
            str(_positive(settings["prompts_per_concurrency"], "prompts_per_concurrency")),
            tokenizer(str(settings["model"]), str(settings.get("model_revision") or ""))] + \
        [str(concurrency) for concurrency in concurrencies]


def tokenizer(model: str, revision: str) -> str:
    """The staged snapshot to read the tokenizer from, when the model is a hub id pinned to a commit: offline, the hub
    library resolves a branch or tag name through the cache's refs, a commit has no ref. "" otherwise (--model)."""
    if re.fullmatch(r"[0-9a-f]{40}", revision) and re.fullmatch(r"[\w.-]+/[\w.-]+", model):
        return f"/root/.cache/huggingface/hub/models--{model.replace('/', '--')}/snapshots/{revision}"
    return ""


def concurrency_list(values: t.Any) -> list[int]:
    """Concurrencies as given (a list, or a comma-separated string from -e), each a positive integer, in order."""
    if isinstance(values, str):
        values = [value for value in values.split(",") if value.strip()]
    if not isinstance(values, (list, tuple)) or not values:
        raise BenchError(f"concurrencies must be a non-empty list of positive integers, not {values!r}")
    result = [_positive(value, "a concurrency") for value in values]
    if len(set(result)) != len(result):
        raise BenchError(f"concurrencies repeat a value: {values!r}")
    return result


def _positive(value: t.Any, name: str) -> int:
    if isinstance(value, bool):
        raise BenchError(f"{name} must be a positive integer, not {value!r}")
    try:
        number = int(str(value).strip())
    except ValueError:
        raise BenchError(f"{name} must be a positive integer, not {value!r}") from None
    if number < 1 or number > 100000:
        raise BenchError(f"{name} must be a positive integer up to 100000, not {value!r}")
    return number


def parse_output(lines: t.Iterable[t.Any]) -> dict[int, dict[str, t.Any]]:
    """The figures of each marked result line of the container's output, by concurrency. The output is the image's:
    a line that is not a well-formed result is not a result (its concurrency then has none)."""
    rows: dict[int, dict[str, t.Any]] = {}
    for line in lines:
        if not isinstance(line, str):
            continue
        position = line.find(RESULT_MARK)
        if position < 0:
            continue
        try:
            row = figures(json.loads(line[position + len(RESULT_MARK):]))
        except (ValueError, BenchError):
            continue
        rows[row["max_concurrency"]] = row
    return rows


def figures(document: t.Any) -> dict[str, t.Any]:
    """The kept figures of one vLLM result file; BenchError unless each is a finite, non-negative number."""
    if not isinstance(document, dict):
        raise BenchError("a result is not a JSON object")
    row: dict[str, t.Any] = {}
    for name in INTEGER_FIELDS:
        value = document.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise BenchError(f"{name} is not a non-negative integer: {value!r}")
        row[name] = value
    for name in FLOAT_FIELDS:
        value = document.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise BenchError(f"{name} is not a non-negative number: {value!r}")
        row[name] = round(float(value), 3)
    if row["max_concurrency"] < 1:
        raise BenchError("max_concurrency is below 1")
    return row


def problems(rows: t.Mapping[int, t.Mapping[str, t.Any]], concurrencies: t.Sequence[int], host: str, status: t.Any,
             output_tail: t.Sequence[str]) -> list[str]:
    """What is wrong with a run's figures: a concurrency without a result, a request that failed."""
    found = []
    tail = " | ".join(line.strip() for line in output_tail[-3:] if isinstance(line, str) and line.strip()) or "no output"
    for concurrency in concurrencies:
        row = rows.get(concurrency)
        if row is None:
            found.append(MESSAGES["NO_RESULT"].format(host=host, concurrency=concurrency, status=status, tail=tail[:600],
                                                      doc=TROUBLESHOOTING))
        elif row["failed"] or not row["completed"]:
            found.append(MESSAGES["FAILED_REQUESTS"].format(host=host, failed=row["failed"],
                                                            total=row["failed"] + row["completed"],
                                                            concurrency=concurrency, doc=TROUBLESHOOTING))
    return found


def comparable(run: t.Mapping[str, t.Any], baseline: t.Mapping[str, t.Any]) -> bool:
    """Whether two runs did the same work (the same prompts, lengths and concurrencies asked)."""
    return bool(baseline) and run.get("settings") == baseline.get("settings")


def verdict(run: t.Mapping[str, t.Any], baseline: t.Mapping[str, t.Any], max_slowdown: float,
            host: str) -> dict[str, t.Any]:
    """A run against the baseline: passed unless output throughput at a concurrency both measured fell by more than
    max_slowdown. No comparable baseline: passed, with why it was not compared."""
    if not comparable(run, baseline):
        reason = "no baseline" if not baseline else "the baseline was measured with other benchmark settings"
        return {"passed": True, "compared": False, "reason": reason, "problem": "", "slowdowns": {}}
    base_rows = rows_by_concurrency(baseline)
    slowdowns = {}
    worse = []
    for concurrency, row in sorted(rows_by_concurrency(run).items()):
        base = base_rows.get(concurrency)
        if not base or not base["output_throughput"]:
            continue
        slowdown = 1 - row["output_throughput"] / base["output_throughput"]
        slowdowns[concurrency] = round(slowdown, 4)
        if slowdown > max_slowdown:
            worse.append(f"concurrency {concurrency}: {row['output_throughput']:.1f} tokens/s against "
                         f"{base['output_throughput']:.1f} ({-slowdown:+.0%})")
    problem = ""
    if worse:
        problem = MESSAGES["SLOWER"].format(host=host, limit=max_slowdown, baseline=describe(baseline),
                                            figures="; ".join(worse), doc=TROUBLESHOOTING)
    return {"passed": not worse, "compared": True, "reason": "", "problem": problem, "slowdowns": slowdowns}


def rows_by_concurrency(record: t.Mapping[str, t.Any]) -> dict[int, dict[str, t.Any]]:
    return {row["max_concurrency"]: row for row in record.get("rows", [])}


def describe(record: t.Mapping[str, t.Any]) -> str:
    """A record's version in a few words: image, its ID's start, vLLM, the model revision, when."""
    version = record.get("version_info", {})
    return (f"{version.get('image', '?')} ({str(version.get('image_id', ''))[7:19] or 'no ID'}), vLLM "
            f"{version.get('vllm_version') or '?'}, model revision {version.get('model_revision', '?')}, "
            f"measured {record.get('date', '?')}")


def table(run: t.Mapping[str, t.Any], baseline: t.Mapping[str, t.Any] | None = None) -> list[str]:
    """The run's figures as readable lines, each concurrency beside the baseline's when there is a comparable one."""
    lines = [f"benchmark of {run.get('model', '?')} on {describe(run)}"]
    base_rows = rows_by_concurrency(baseline) if baseline and comparable(run, baseline) else {}
    if base_rows:
        lines.append(f"baseline: {describe(baseline)}")
    lines.append("concurrency | requests/s | output tokens/s | TTFT p50/p90/p99 ms | TPOT p50/p90/p99 ms")
    for concurrency, row in sorted(rows_by_concurrency(run).items()):
        lines.append(_row_line(concurrency, row))
        base = base_rows.get(concurrency)
        if base:
            lines.append(_row_line(concurrency, base, "  baseline"))
    return lines


def _row_line(concurrency: int, row: t.Mapping[str, t.Any], prefix: str = "") -> str:
    return (f"{prefix}{concurrency:>4} | {row['request_throughput']:.2f} | {row['output_throughput']:.1f} | "
            f"{row['p50_ttft_ms']:.1f}/{row['p90_ttft_ms']:.1f}/{row['p99_ttft_ms']:.1f} | "
            f"{row['p50_tpot_ms']:.1f}/{row['p90_tpot_ms']:.1f}/{row['p99_tpot_ms']:.1f}")


def valid_record(document: t.Any) -> dict[str, t.Any]:
    """A record as the bench role writes it, else {} (a hand-edited or truncated file reads as no record)."""
    if not isinstance(document, dict) or document.get("version") != RECORD_VERSION:
        return {}
    if not isinstance(document.get("settings"), dict) or not isinstance(document.get("version_info"), dict):
        return {}
    rows = document.get("rows")
    if not isinstance(rows, list) or not rows:
        return {}
    try:
        document = dict(document, rows=[figures(row) for row in rows])
    except BenchError:
        return {}
    return document
