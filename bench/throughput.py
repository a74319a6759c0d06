"""The serving-throughput rows of docs/benchmarks.md (#36: "is the second node worth it"): playbooks/bench.yml, vLLM's
own `vllm bench serve` from the serving image, at tensor parallel 2 across both nodes beside TP=1 on the head alone.
Run by bench/run.py; alone (`python3 bench/throughput.py`, on a running two-node lab) it serves each layout in turn
(`--tags vllm`), measures it, ends at TP=2 (the lab's own layout) and rewrites only its own section of
docs/benchmarks.md."""
from __future__ import annotations

import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from run import RECORDS, TP1, log, playbook, rewrite_section  # noqa: E402  (bench/run.py's helpers)

HEADER = "## Serving throughput"
# Per layout, these concurrencies: 1 (one user's latency) and 4 (the lab's two cores kept busy).
CONCURRENCIES = (1, 4)


def bench(extra: tuple[str, ...]) -> dict[int, dict]:
    """playbooks/bench.yml against the layout now serving (the lab's inventory plus `extra`): its rows by concurrency."""
    playbook("-e", json.dumps({"bench_concurrencies": list(CONCURRENCIES)}), *extra, playbook_path="playbooks/bench.yml")
    rows = json.loads((RECORDS / "bench.json").read_text())["rows"]
    return {row["max_concurrency"]: row for row in rows}


def measure() -> dict[int, dict[int, dict]]:
    """TP=1 on the head, then TP=2 across both nodes: each served (`--tags vllm`), then benchmarked."""
    figures = {}
    for layout, extra in ((1, TP1), (2, ())):
        playbook("--tags", "vllm", *extra)
        figures[layout] = bench(extra)
        rows = [f"c={c} {row['output_throughput']:.1f} tok/s" for c, row in sorted(figures[layout].items())]
        log(f"TP={layout}: {', '.join(rows)}")
    return figures


def section(figures: dict[int, dict[int, dict]]) -> list[str]:
    """The table: layout -> concurrency -> bench.json's row."""
    lines = [
        f"{HEADER}: tensor parallel 2 across both nodes beside TP=1 on the head (`playbooks/bench.yml`)",
        "",
        "vLLM's own `vllm bench serve`, run by the `bench` role from the serving image on the head: random prompts of the",
        "lab's lengths (`bench_input_len`, `bench_output_len` in inventories/lab), 4 prompts per unit of concurrency, both",
        "layouts measured in one run. On the lab the tiny model fits one CPU node, so the second node costs a Gloo",
        "all-reduce over a Docker bridge per layer and token: the lab shows what the collection measures, not what two",
        "Sparks gain.",
        "",
        "| concurrency | TP=2: output tokens/s, TTFT p50, TPOT p50 | TP=1 (baseline): output tokens/s, TTFT p50, TPOT p50 "
        "| throughput ratio |",
        "|---|---|---|---|",
    ]
    for concurrency in CONCURRENCIES:
        two, one = figures[2][concurrency], figures[1][concurrency]
        lines.append(f"| {concurrency} | {two['output_throughput']:.1f}, {two['p50_ttft_ms']:.1f} ms, "
                     f"{two['p50_tpot_ms']:.1f} ms | {one['output_throughput']:.1f}, {one['p50_ttft_ms']:.1f} ms, "
                     f"{one['p50_tpot_ms']:.1f} ms | {two['output_throughput'] / one['output_throughput']:.2f}x |")
    return lines + [""]


if __name__ == "__main__":
    rewrite_section(HEADER, section(measure()))
    log("docs/benchmarks.md: serving throughput rows rewritten")
