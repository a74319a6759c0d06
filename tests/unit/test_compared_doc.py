"""docs/compared.md names the procedures as their sources stand today (issue #20, item 13): vLLM's script at its
current path with the worker pinning it gained, the dashboard row attributed to the launcher that sets it, and
the two community launchers beside the collection."""

from __future__ import annotations

import pathlib

COMPARED = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "compared.md").read_text()


def test_vllm_script_at_its_current_path_with_worker_pinning():
    assert "examples/ray_serving/run_cluster.sh" in COMPARED
    assert "`--node-ip-address=<VLLM_HOST_IP>` when one is given" in COMPARED


def test_dashboard_on_all_interfaces_is_eugrs_not_nvidias():
    row = next(line for line in COMPARED.splitlines() if line.startswith("| Dashboard |"))
    assert "eugr" in row and "`127.0.0.1` (`ray_head_dashboard_host`)" in row


def test_the_community_launchers_have_their_columns():
    header = next(line for line in COMPARED.splitlines() if line.startswith("| Setting | eugr"))
    assert [cell.strip() for cell in header.strip("|").split("|")] == [
        "Setting", "eugr spark-vllm-docker", "sparkrun `vllm-distributed`", "this collection"]
