"""Which Ray token a run places: the nodes' token is the truth (F21)."""

from __future__ import annotations

import re

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._ray_token import MESSAGES, token_plan

HEAD = "a" * 64
OTHER = "b" * 64
NAMES = {"head": "spark-1", "head_file": "/etc/x/ray_auth_token", "controller_file": "inv/credentials/ray_auth_token"}


@pytest.mark.parametrize(
    "case, controller, head, from_inventory, rotate, action, token, write",
    [
        ("first deploy: nothing anywhere", "", "", False, False, "create", None, True),
        ("a second copy of the inventory, a fresh clone", "", HEAD, False, False, "adopt", HEAD, True),
        ("the same token (file)", HEAD, HEAD, False, False, "keep", HEAD, False),
        ("the same token (Vault)", HEAD, HEAD, True, False, "keep", HEAD, False),
        ("a trailing newline is not a different token", HEAD + "\n", HEAD, False, False, "keep", HEAD, False),
        ("auth turned on, or the head rebuilt: the controller's token", OTHER, "", False, False, "keep", OTHER, False),
        ("another copy's token", OTHER, HEAD, False, False, "refuse", "", False),
        ("another token in Vault", OTHER, HEAD, True, False, "refuse", "", False),
        ("rotate, generated", HEAD, HEAD, False, True, "rotate", None, True),
        ("rotate to the token in Vault", OTHER, HEAD, True, True, "rotate", OTHER, False),
        ("rotate to the token the cluster has", HEAD, HEAD, True, True, "refuse", "", False),
    ],
)
def test_token_plan(case, controller, head, from_inventory, rotate, action, token, write):
    plan = token_plan(controller, head, from_inventory=from_inventory, rotate=rotate, **NAMES)
    assert plan["action"] == action, case
    if token is None:
        assert re.fullmatch(r"[0-9a-f]{64}", plan["token"]), case
        assert plan["token"] not in (HEAD, OTHER), case
    else:
        assert plan["token"] == token, case
    assert plan["write_controller_file"] is write, case
    assert bool(plan["message"]) is (action == "refuse"), case


def test_refusal_names_the_head_both_files_and_the_fix():
    plan = token_plan(OTHER, HEAD, from_inventory=False, rotate=False, **NAMES)
    assert plan["message"] == MESSAGES["F21_DIFFERS"].format(
        source=NAMES["controller_file"], doc=plan["message"].split("See ")[1][:-len("#f21")], **NAMES)
    for text in ("[F21] spark-1", "/etc/x/ray_auth_token", "inv/credentials/ray_auth_token", "vllm_cluster_ray_auth_rotate=true"):
        assert text in plan["message"]


def test_refusal_never_prints_a_token():
    for from_inventory, rotate, controller in ((False, False, OTHER), (True, True, HEAD)):
        plan = token_plan(controller, HEAD, from_inventory=from_inventory, rotate=rotate, **NAMES)
        assert HEAD not in plan["message"] and OTHER not in plan["message"]
