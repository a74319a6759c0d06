"""Hosts added from an overlay inventory (make lab LAB_INVENTORIES="inventories/lab inventories/lab-3node")
belong to the same cluster: they must resolve the cluster's token file, not one of their own inventory."""

from __future__ import annotations

import json
import os
import subprocess

from test_sparks_render import REPO


def test_overlay_hosts_share_the_heads_token_file(tmp_path):
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    inventories = ["-i", "inventories/lab", "-i", "inventories/lab-3node", "-i", "inventories/lab-4node"]
    result = subprocess.run(
        ["ansible-playbook", "tests/render/cluster_wide.yml", *inventories, "-e", f"render_dir={tmp_path}"],
        cwd=REPO, env=env, text=True, capture_output=True, timeout=300, check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    resolved = {path.stem: json.loads(path.read_text()) for path in tmp_path.glob("*.json")}
    assert sorted(resolved) == ["spark-1", "spark-2", "spark-3", "spark-4"]
    expected = str(REPO / "inventories" / "lab" / "credentials" / "ray_auth_token")
    assert {host: values["ray_auth_token_file"] for host, values in resolved.items()} == dict.fromkeys(resolved, expected)
