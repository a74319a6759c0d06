"""container_decide: _common's read of the node and its start decision in one task. The read is made only where the
layer's earlier read does not answer every question; the decision is _container_plan's; the reason shows at -v without
the spec; a failed read fails the task."""

from __future__ import annotations

from unittest import mock

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.action.container_decide import ActionModule
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._container_plan import REASONS, spec_digest

TOKEN, CONFIG = "/etc/c/ray_auth_token", "/etc/c"
RECORD_PATH = "/etc/c/container-vllm-cluster-ray-head.json"
SPEC = {"name": "vllm-cluster-ray-head", "image": "lab/runtime:1", "pull": "never", "command": ["start", "--head"],
        "env_file": "/etc/c/node.env", "restart_policy": "unless-stopped", "restart": False, "state": "started"}
SHAS = {TOKEN: "t" * 64, "/etc/c/node.env": "e" * 64}
RUNNING = {"exists": True, "id": "c1", "running": True, "started_at": "2026-12-05T21:40:02Z", "image_id": "sha256:img",
           "restart_policy": "unless-stopped"}
NODE = {"changed": False, "containers": {SPEC["name"]: RUNNING}, "images": {SPEC["image"]: "sha256:img"},
        "files": {path: {"exists": True, "sha256": sha} for path, sha in SHAS.items()},
        "records": {RECORD_PATH: {"id": "c1", "digest": spec_digest(SPEC, "sha256:img", SHAS)}}}


def action(args, node=None):
    task = mock.MagicMock(args=args, async_val=0, check_mode=False, diff=False)
    play_context = mock.MagicMock(check_mode=False)
    plugin = ActionModule(task, mock.MagicMock(), play_context, mock.MagicMock(), mock.MagicMock(), mock.MagicMock())
    plugin._execute_module = mock.MagicMock(return_value=node if node is not None else NODE)  # pylint: disable=protected-access
    return plugin


def run(plugin):
    return plugin.run(task_vars={"inventory_hostname": "spark-1"})


def test_it_reads_what_the_decision_needs_and_leaves_a_container_that_runs_as_made():
    plugin = action({"spec": SPEC, "token_path": TOKEN, "config_dir": CONFIG})
    result = run(plugin)
    plugin._execute_module.assert_called_once()  # pylint: disable=protected-access
    called = plugin._execute_module.call_args.kwargs  # pylint: disable=protected-access
    assert called["module_name"] == "inferops.vllm_cluster.node_state"
    assert called["module_args"] == {"containers": [SPEC["name"]], "images": [SPEC["image"]],
                                     "files": [TOKEN, "/etc/c/node.env"], "records": [RECORD_PATH]}
    assert not result.get("failed") and result["read"] is True and result["changed"] is False
    assert result["plan"]["apply"] is False and result["plan"]["started_at"] == RUNNING["started_at"]
    assert result["record"] == RECORD_PATH and result["spec"] == SPEC
    assert result["token"] == {"exists": True, "sha256": "t" * 16}


@pytest.mark.parametrize(("case", "read", "reads"), [
    ("no earlier read", None, True),
    ("an earlier read that asked everything", NODE, False),
    ("an earlier read short of the record", dict(NODE, records={}), True),
    ("an earlier read that failed", dict(NODE, failed=True), True),
    ("an earlier read that was skipped", dict(NODE, skipped=True), True),
])
def test_an_earlier_read_of_the_layer_stands_only_where_it_answers_everything(case, read, reads):
    # the node's own read finds the container gone: a decision made from the earlier read would leave it
    plugin = action({"spec": SPEC, "token_path": TOKEN, "config_dir": CONFIG, "read": read}, dict(NODE, containers={}))
    result = run(plugin)
    assert plugin._execute_module.called is reads, case  # pylint: disable=protected-access
    assert result["read"] is reads, case
    assert result["plan"]["apply"] is reads, case
    assert result["plan"]["reason"] == (REASONS["absent"] if reads else "runs as its spec asks"), case


@pytest.mark.parametrize(("case", "node", "reason"), [
    ("no container", dict(NODE, containers={}), "absent"),
    ("a new env file", dict(NODE, files=dict(NODE["files"], **{"/etc/c/node.env": {"exists": True, "sha256": "f" * 64}})),
     "changed"),
    ("no token any more", dict(NODE, files=dict(NODE["files"], **{TOKEN: {"exists": False}})), "changed"),
])
def test_what_changed_on_the_node_starts_it(case, node, reason):
    result = run(action({"spec": SPEC, "token_path": TOKEN, "config_dir": CONFIG}, node))
    assert result["plan"]["apply"] is True and result["plan"]["reason"] == REASONS[reason], case


def test_a_restart_asked_for_starts_it_whatever_the_node_holds():
    result = run(action({"spec": dict(SPEC, restart=True), "token_path": TOKEN, "config_dir": CONFIG}))
    assert result["plan"]["apply"] is True and result["plan"]["reason"] == REASONS["restart"]


def test_a_failed_read_fails_the_task_with_its_words():
    result = run(action({"spec": SPEC, "token_path": TOKEN, "config_dir": CONFIG},
                        {"failed": True, "msg": "spark-1: the Docker engine does not answer"}))
    assert result["failed"] is True and result["msg"] == "spark-1: the Docker engine does not answer"
    assert "plan" not in result


@pytest.mark.parametrize(("case", "spec", "words"), [
    ("no name", {k: v for k, v in SPEC.items() if k != "name"}, "no name"),
    ("no image", dict(SPEC, image=""), "no image"),
])
def test_a_spec_without_name_or_image_is_refused_before_any_read(case, spec, words):
    plugin = action({"spec": spec, "token_path": TOKEN, "config_dir": CONFIG})
    result = run(plugin)
    assert result["failed"] is True and words in result["msg"], case
    assert not plugin._execute_module.called  # pylint: disable=protected-access


def test_the_reason_shows_at_v_without_the_spec():
    secret_spec = dict(SPEC, command=["vllm", "serve", "--api-key", "s3cret"])
    with mock.patch("ansible_collections.inferops.vllm_cluster.plugins.action.container_decide.display") as display:
        run(action({"spec": secret_spec, "token_path": TOKEN, "config_dir": CONFIG}))
    shown = " ".join(str(call.args[0]) for call in display.v.call_args_list)
    assert "spark-1: vllm-cluster-ray-head: start or update (its spec, image or start files changed)" == shown
    assert "s3cret" not in shown


def test_no_token_file_on_the_node_labels_nothing():
    node = dict(NODE, files=dict(NODE["files"], **{TOKEN: {"exists": False}}))
    result = run(action({"spec": SPEC, "token_path": TOKEN, "config_dir": CONFIG}, node))
    assert result["token"] == {"exists": False, "sha256": ""}


def test_a_dry_run_reads_the_node_too():
    plugin = action({"spec": SPEC, "token_path": TOKEN, "config_dir": CONFIG})
    plugin._task.check_mode = True  # pylint: disable=protected-access
    plugin._play_context.check_mode = True  # pylint: disable=protected-access
    result = run(plugin)
    assert plugin._execute_module.called and result["plan"]["apply"] is False  # pylint: disable=protected-access


def test_the_result_holds_no_file_digest_of_the_node():
    # the env file's sha256 would let a guess of a low-entropy secret in it be checked
    result = run(action({"spec": SPEC, "token_path": TOKEN, "config_dir": CONFIG}))
    assert "e" * 64 not in repr(result) and "t" * 64 not in repr(result) and "files" not in result


def test_the_decision_is_the_filters():
    from ansible_collections.inferops.vllm_cluster.plugins.filter.container_plan import container_plan
    result = run(action({"spec": SPEC, "token_path": TOKEN, "config_dir": CONFIG}))
    assert result["plan"] == container_plan(SPEC, NODE, RECORD_PATH, [TOKEN, "/etc/c/node.env"])
