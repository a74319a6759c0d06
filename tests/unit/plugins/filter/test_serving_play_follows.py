"""Whether site.yml's vLLM play runs later in the run: then the validate play leaves vLLM to it."""

from __future__ import annotations

import pathlib

import pytest
import yaml

from ansible_collections.inferops.vllm_cluster.plugins.filter.serving_play_follows import (
    SERVING_PLAY_TAGS,
    serving_play_follows,
)


@pytest.mark.parametrize(
    "command, run_tags, skip_tags, head_in_play, follows",
    [
        ("site.yml", ["all"], [], True, True),
        ("--tags validate", ["validate"], [], True, False),
        ("--tags vllm", ["vllm"], [], True, True),
        ("--tags ray", ["ray"], [], True, True),
        ("--limit spark-2 --tags ray_worker", ["ray_worker"], [], False, False),
        ("--tags ray_worker", ["ray_worker"], [], True, False),
        ("--limit spark-3 --skip-tags vllm (add a node)", ["all"], ["vllm"], False, False),
        ("--skip-tags vllm", ["all"], ["vllm"], True, False),
        ("--tags ray --skip-tags ray_head", ["ray"], ["ray_head"], True, False),
        ("--limit spark-2 (head left out)", ["all"], [], False, False),
        ("no tags reported", [], [], True, True),
    ],
)
def test_serving_play_follows(command, run_tags, skip_tags, head_in_play, follows):
    assert serving_play_follows(run_tags, skip_tags, head_in_play) is follows, command


def test_the_tags_are_site_ymls_own():
    site = yaml.safe_load((pathlib.Path(__file__).resolve().parents[4] / "playbooks" / "site.yml").read_text())
    [play] = [p for p in site if "vllm_server" in str(p.get("roles"))]
    assert set(play["roles"][0]["tags"]) == SERVING_PLAY_TAGS
