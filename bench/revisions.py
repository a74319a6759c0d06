"""A run that changes nothing, validate and diagnose, at two revisions of the collection side by side on one lab (#33).

    python3 bench/revisions.py BASE [RUNS]

Checks BASE out into a temporary worktree that uses this checkout's venv, then alternates the two revisions run by
run (no-op `site.yml`, then `--tags validate`, then `playbooks/diagnose.yml --check`) on the lab that is up and
converged, so that the machine's load falls on both alike; medians, and every run's figure, go to their section of
docs/benchmarks.md. Changes nothing on the lab (both revisions leave a converged cluster as they find it; a site.yml
run that reports changes is refused; diagnose writes only its report, in a temporary directory). Nothing here asserts
a timing: it measures.
"""

from __future__ import annotations

import datetime
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from run import REPO, log, rewrite_section  # noqa: E402  # pylint: disable=wrong-import-position

SECTION = "## A run that changes nothing, and validate: this revision beside its base (#33)"


def worktree(revision: str) -> pathlib.Path:
    """BASE checked out beside this checkout, with the collection linked where its ansible.cfg looks."""
    where = pathlib.Path(tempfile.mkdtemp(prefix="inferops-bench-base-"))
    shutil.rmtree(where)
    subprocess.run(["git", "worktree", "add", "--detach", str(where), revision], cwd=REPO, check=True,
                   capture_output=True)
    link = where / ".ansible" / "collections" / "ansible_collections" / "inferops" / "vllm_cluster"
    link.parent.mkdir(parents=True)
    link.symlink_to(where)
    # what the lab writes into its inventory and git ignores (the images lab/build-images built, the controller's
    # Ray token): the base revision reads them where this checkout keeps them
    for generated in subprocess.run(["git", "ls-files", "--others", "--ignored", "--exclude-standard", "--directory",
                                     "inventories/lab"], cwd=REPO, text=True, capture_output=True,
                                    check=True).stdout.split():
        source, target = REPO / generated, where / generated
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)
        else:
            shutil.copy2(source, target)
    return where


def measured(reports: pathlib.Path) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """What is measured: a label, the playbook, its arguments (diagnose's report in a directory of the run's own)."""
    return (("no-op `site.yml` (changed=0)", "site.yml", ()),
            ("`site.yml --tags validate`", "site.yml", ("--tags", "validate")),
            ("`playbooks/diagnose.yml --check`", "playbooks/diagnose.yml",
             ("--check", "-e", f"diagnose_report={reports / 'diagnose.md'}")))


def timed(checkout: pathlib.Path, playbook: str, *args: str) -> tuple[float, int]:
    env = dict(os.environ, ANSIBLE_CONFIG=str(checkout / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=f"{REPO / '.venv' / 'bin'}:{os.environ['PATH']}")
    started = time.monotonic()
    result = subprocess.run(["ansible-playbook", playbook, *args], cwd=checkout, env=env, text=True,
                            capture_output=True, check=False)
    seconds = time.monotonic() - started
    if result.returncode != 0:
        sys.exit(f"bench: {checkout} {playbook} {' '.join(args)} failed:\n{result.stdout[-3000:]}{result.stderr[-2000:]}")
    changed = sum(int(n) for n in re.findall(r"changed=(\d+)", result.stdout))
    tasks = len(re.findall(r"^TASK \[", result.stdout, re.M))
    if changed and playbook == "site.yml":
        sys.exit(f"bench: {checkout} site.yml {' '.join(args)} changed {changed} things: converge the lab first")
    return seconds, tasks


def main(base: str, runs: int) -> None:
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, text=True, capture_output=True,
                          check=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO, text=True,
                                capture_output=True, check=True).stdout.strip())
    base_short = subprocess.run(["git", "rev-parse", "--short", base], cwd=REPO, text=True, capture_output=True,
                                check=True).stdout.strip()
    other = worktree(base)
    reports = pathlib.Path(tempfile.mkdtemp(prefix="inferops-bench-diagnose-"))
    figures: dict[tuple[str, str], list[float]] = {}
    headers: dict[tuple[str, str], int] = {}
    try:
        for label, playbook, args in measured(reports):
            for run in range(runs):
                for name, checkout in (("base", other), ("this", REPO)):
                    seconds, tasks = timed(checkout, playbook, *args)
                    figures.setdefault((label, name), []).append(seconds)
                    headers[(label, name)] = tasks
                    log(f"{label} {name} run {run + 1}: {seconds:.1f} s, {tasks} task headers")
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(other)], cwd=REPO, check=False, capture_output=True)
        shutil.rmtree(reports, ignore_errors=True)
    lines = [SECTION, "",
             f"Written by `python3 bench/revisions.py {base_short} {runs}` on {datetime.date.today()}: base {base_short},"
             f" this revision {head}{' with uncommitted changes' if dirty else ''}; the two alternate run by run on one"
             " converged 2-node lab (Ray backend, vLLM serving). Medians; every run in brackets. The goals of #33:"
             " no-op 15 s, validate 3 s (a bare `ray.nodes()` over `docker exec`: 1.3 s); diagnose has none (it is run on a"
             " sick cluster: the faster the better).", "",
             "| run | base | this revision | change |", "|---|---|---|---|"]
    for label in dict.fromkeys(key[0] for key in figures):
        base_runs, this_runs = figures[(label, "base")], figures[(label, "this")]
        base_median, this_median = statistics.median(base_runs), statistics.median(this_runs)
        lines.append(
            f"| {label} | {base_median:.1f} s ({', '.join(f'{s:.1f}' for s in base_runs)}; "
            f"{headers[(label, 'base')]} task headers) | {this_median:.1f} s ({', '.join(f'{s:.1f}' for s in this_runs)}; "
            f"{headers[(label, 'this')]} task headers) | {this_median - base_median:+.1f} s |")
    rewrite_section(SECTION, lines + [""])
    log("docs/benchmarks.md: section rewritten")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3)
