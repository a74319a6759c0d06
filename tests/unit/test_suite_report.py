"""tests/suite/report, run on recorded stages and a log: CI reads its last line, so a red run must never end on
'0 failed', and pytest's closing lines count with or without -q's borders."""

from __future__ import annotations

import pathlib
import subprocess

import pytest

REPORT = pathlib.Path(__file__).resolve().parents[2] / "tests" / "suite" / "report"


def report(tmp_path, stages: list[tuple[str, str, str, int]], log: str) -> list[str]:
    timings = tmp_path / "timings.tsv"
    timings.write_text("".join(f"{lane}\t{name}\t{status}\t{seconds}\n" for lane, name, status, seconds in stages))
    (tmp_path / "log").write_text(log)
    out = subprocess.run([str(REPORT), str(timings), str(tmp_path / "log")], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


@pytest.mark.parametrize(("stages", "log", "last"), [
    ([("lab", "integration:serial", "0", 100)], "35 passed, 37 deselected in 1183.19s (0:19:43)\n",
     "suite: 35 passed, 0 failed, 0 skipped"),
    ([("static", "unit", "0", 50)], "==== 481 passed, 2 skipped in 71.21s (0:01:11) ====\n",
     "suite: 481 passed, 0 failed, 2 skipped"),
    ([("lab", "integration:serial", "1", 100)], "1 failed, 34 passed in 1183.19s (0:19:43)\n",
     "suite: 34 passed, 1 failed, 0 skipped"),
    # a failed molecule step and a skipped stage count, though no pytest line says so
    ([("lab", "default:verify", "2", 10), ("lab", "integration", "skipped", 0), ("static", "unit", "0", 5)],
     "12 passed in 3.20s\n", "suite: 12 passed, 2 failed, 0 skipped"),
    ([("static", "sanity", "2", 130)], "", "suite: 0 passed, 1 failed, 0 skipped"),
    # lines that only look like a summary are not counted
    ([("lab", "lab-create", "0", 1)], "TASK [x] 3 passed in 2s\n5 passed in 2.0s\n", "suite: 5 passed, 0 failed, 0 skipped"),
])
def test_the_closing_line_adds_up_tests_and_failed_stages(tmp_path, stages, log, last):
    lines = report(tmp_path, stages, log)
    assert lines[-1] == last


def test_the_table_lists_each_stage_and_each_lanes_total(tmp_path):
    lines = report(tmp_path, [("lab", "default:converge", "0", 215), ("static", "lint", "0", 34),
                              ("lab", "integration:serial", "1", 1182)], "")
    assert any(line.split()[:4] == ["lab", "default:converge", "ok", "215"] for line in lines)
    assert any(line.split()[:3] == ["lab", "integration:serial", "FAILED(1)"] for line in lines)
    assert any(line.startswith("lab") and "(lane total)" in line and "1397 s" in line for line in lines)
