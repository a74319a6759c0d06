"""Versions (F29, F30): the last known good record, a re-pointed tag, the upgrade's plan and report, the answers to
the fixed prompts, and the inner run's command line and failures (read from a real ansible-playbook's output)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _upgrade
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._upgrade import UpgradeError

OLD_ID = "sha256:" + "ca" * 32
NEW_ID = "sha256:" + "65" * 32


def version(**changes) -> dict:
    values = {name: "" for name in _upgrade.VERSION_VARIABLES}
    values.update(vllm_cluster_image="lab/runtime:1", vllm_server_model="org/model", vllm_cluster_model_revision="main",
                  vllm_server_tensor_parallel_size=2, vllm_server_enforce_eager=True,
                  vllm_server_env={"VLLM_CPU_KVCACHE_SPACE": "1"}, vllm_server_extra_args=[])
    values.update(changes)
    return values


def record(**changes) -> dict:
    images = {host: {"image_id": OLD_ID, "vllm_version": "0.32.0", "ray_version": "2.60.0"}
              for host in ("spark-1", "spark-2")}
    return _upgrade.deployed_record(_upgrade.version_values({"spark-1": version(**changes)}, "spark-1"), images,
                                    "vllm-cluster", "2026-12-06T04:22:09Z")


def test_a_version_is_the_heads_values_as_text_whatever_their_source():
    from_inventory = _upgrade.version_values({"spark-1": version(), "spark-2": version()}, "spark-1")
    from_extra_vars = _upgrade.version_values(
        {"spark-1": version(vllm_server_tensor_parallel_size="2", vllm_server_enforce_eager="true")}, "spark-1")
    assert from_inventory == from_extra_vars
    assert from_inventory["vllm_server_tensor_parallel_size"] == "2"
    assert _upgrade.settings_hash(from_inventory) == _upgrade.settings_hash(from_extra_vars)


def test_nodes_that_disagree_on_a_version_variable_are_named():
    with pytest.raises(UpgradeError, match=r"\[F30\] vllm_server_max_model_len differs between the nodes "
                                           r'\(spark-1: "256"; spark-2: "512"\)'):
        _upgrade.version_values({"spark-1": version(vllm_server_max_model_len=256),
                                 "spark-2": version(vllm_server_max_model_len=512)}, "spark-1")


def test_a_secret_in_the_servers_environment_is_never_recorded():
    with pytest.raises(UpgradeError, match="HF_TOKEN"):
        _upgrade.version_values({"spark-1": version(vllm_server_env={"HF_TOKEN": "hf_x"})}, "spark-1")


def test_the_record_names_the_image_by_id_and_keeps_its_date_when_nothing_changed():
    first = record()
    assert first["image_id"] == OLD_ID and first["vllm_version"] == "0.32.0" and first["nodes"] == ["spark-1", "spark-2"]
    assert _upgrade.valid_record(json.loads(json.dumps(first))) == first
    images = {"spark-1": {"image_id": OLD_ID, "vllm_version": "0.32.0", "ray_version": "2.60.0"},
              "spark-2": {"image_id": OLD_ID, "vllm_version": "0.32.0", "ray_version": "2.60.0"}}
    again = _upgrade.deployed_record(first["values"], images, "vllm-cluster", "2026-12-07T00:00:00Z", first)
    assert again["date"] == first["date"]
    changed = _upgrade.deployed_record(dict(first["values"], vllm_server_dtype="float16"), images, "vllm-cluster",
                                       "2026-12-07T00:00:00Z", first)
    assert changed["date"] == "2026-12-07T00:00:00Z"


def test_nodes_with_different_images_make_no_record():
    images = {"spark-1": {"image_id": OLD_ID}, "spark-2": {"image_id": NEW_ID}}
    with pytest.raises(UpgradeError, match="one image ID"):
        _upgrade.deployed_record(record()["values"], images, "c", "d")


@pytest.mark.parametrize("mutate", [
    lambda doc: doc.update(version=9),
    lambda doc: doc["values"].update(vllm_server_dtype="float16"),  # the hash no longer matches: edited by hand
    lambda doc: doc["values"].pop("vllm_server_env"),
    lambda doc: doc.update(image_id="latest"),
])
def test_a_record_not_as_site_yml_wrote_it_reads_as_none(mutate):
    document = record()
    mutate(document)
    assert _upgrade.valid_record(document) == {}


@pytest.mark.parametrize("image, found, named", [
    ("lab/runtime:1", {"spark-1": OLD_ID, "spark-2": NEW_ID}, "spark-2"),
    ("lab/runtime:1", {"spark-1": OLD_ID, "spark-2": OLD_ID}, None),
    ("lab/runtime:1", {"spark-1": OLD_ID, "spark-2": ""}, None),      # not on the node yet: judged once it is
    ("lab/runtime:2", {"spark-1": NEW_ID}, None),                      # another name: an upgrade, not a re-push
])
def test_a_re_pointed_tag_is_named_with_both_ids(image, found, named):
    message = _upgrade.repointed(record(), image, found)
    if named is None:
        assert message == ""
    else:
        expected = f"[F29] {named}: lab/runtime:1 now names image {NEW_ID[7:19]}, not the {OLD_ID[7:19]}"
        assert message.startswith(expected)
        assert "Nothing was changed" in message and "#f29" in message
    assert _upgrade.repointed({}, image, found) == ""


def test_the_plan_lists_each_change_and_both_ways():
    target = _upgrade.version_values({"spark-1": version(vllm_cluster_image="lab/runtime:2",
                                                         vllm_cluster_model_revision="abc123")}, "spark-1")
    plan = _upgrade.plan(record(), target, {"spark-1": NEW_ID, "spark-2": NEW_ID})
    assert [change["name"] for change in plan["changes"]] == ["vllm_cluster_image", "vllm_cluster_model_revision"]
    assert plan["changes"][0] == {"name": "vllm_cluster_image", "from": "lab/runtime:1", "to": "lab/runtime:2"}
    assert plan["nothing"] is False and plan["image_changes"] is True
    assert plan["forward"]["vllm_cluster_image"] == "lab/runtime:2"
    assert plan["back"]["vllm_cluster_image"] == "lab/runtime:1" and plan["back"]["vllm_cluster_model_revision"] == "main"
    assert plan["forward_hash"] == _upgrade.settings_hash(target) and plan["back_model"] == "org/model"


def test_the_same_version_plans_nothing():
    same = _upgrade.version_values({"spark-1": version()}, "spark-1")
    plan = _upgrade.plan(record(), same, {"spark-1": OLD_ID, "spark-2": OLD_ID})
    assert plan["nothing"] is True and plan["changes"] == [] and plan["image_changes"] is False


def test_a_tag_pulled_again_on_purpose_is_a_change_and_the_way_back_names_the_old_image_by_id():
    same = _upgrade.version_values({"spark-1": version()}, "spark-1")
    plan = _upgrade.plan(record(), same, {"spark-1": NEW_ID, "spark-2": NEW_ID})
    assert plan["nothing"] is False and plan["image_changes"] is True
    assert plan["changes"][0]["name"] == "image ID of lab/runtime:1"
    assert plan["back"]["vllm_cluster_image"] == OLD_ID and plan["back"]["vllm_cluster_image_archive"] == ""


def test_only_the_planned_version_recorded_by_the_trial_may_become_the_last_known_good():
    target = _upgrade.version_values({"spark-1": version(vllm_cluster_image="lab/runtime:2")}, "spark-1")
    plan = _upgrade.plan(record(), target, {"spark-1": NEW_ID})
    trial = _upgrade.deployed_record(target, {"spark-1": {"image_id": NEW_ID}}, "c", "d")
    assert _upgrade.trial_problem(trial, plan, "/r/trial.json") == ""
    assert "(found none)" in _upgrade.trial_problem({}, plan, "/r/trial.json")
    other = _upgrade.deployed_record(dict(target, vllm_server_dtype="float16"), {"spark-1": {"image_id": NEW_ID}}, "c", "d")
    expected = "[F30] the upgrade's site.yml run left no record of the version planned in /r/trial.json"
    assert _upgrade.trial_problem(other, plan, "/r/trial.json").startswith(expected)


def test_the_free_space_is_read_from_dfs_last_line_or_refused():
    output = ("Filesystem        1-blocks        Used   Available Capacity Mounted on\n"
              "/dev/nvme0n1p2 3936878387200 1.0 42949672960      1% /\n")
    assert _upgrade.df_available(output) == 42949672960
    for bad in ("", "Filesystem 1-blocks Used Available\n", "/dev/x 1 2 lots 1% /"):
        with pytest.raises(UpgradeError, match="df gave no free space"):
            _upgrade.df_available(bad)


def test_a_running_version_without_a_benchmark_is_named_with_its_problems():
    assert _upgrade.premeasure_problem([], "spark-1") == ""
    assert _upgrade.premeasure_problem(["[F30] spark-1: no result"], "spark-1").startswith(
        "[F30] spark-1: the running version gives no benchmark to judge the new one against: [F30] spark-1: no result")


def test_the_disk_check_names_the_node_the_space_and_the_need():
    assert _upgrade.disk_problem("spark-1", 40 * 2**30, "/var/lib/docker", 30) == ""
    message = _upgrade.disk_problem("spark-2", 12 * 2**30, "/var/lib/docker", 30)
    assert message.startswith("[F30] spark-2: 12.0 GiB free under Docker's data root /var/lib/docker, the new image "
                              "needs 30 GiB")


def _answer(text="Hello", finish="length", tokens=16, status=200, item="Why?"):
    return {"item": item, "status": status, "msg": "OK",
            "json": {"choices": [{"text": text, "finish_reason": finish}], "usage": {"completion_tokens": tokens}}}


@pytest.mark.parametrize("result, fault", [
    (_answer(), None),
    (_answer(finish="stop"), None),
    (_answer(text="  "), "an empty completion"),
    (_answer(text=None), "an empty completion"),
    (_answer(finish=None), "no finish reason"),
    (_answer(tokens=0), "no completion tokens"),
    (_answer(status=500), "HTTP 500"),
    (_answer(status=-1), "HTTP -1"),
    ({"item": "Why?", "status": 200, "json": {"choices": []}}, "without choices"),
    ({"item": "Why?", "status": 200, "json": "not json"}, "without choices"),
])
def test_each_fixed_prompt_needs_a_well_formed_answer(result, fault):
    found = _upgrade.answer_problems([result], "spark-1")
    if fault is None:
        assert found == []
    else:
        assert len(found) == 1 and fault in found[0] and found[0].startswith('[F30] spark-1: the fixed prompt "Why?"')


def test_the_inner_run_gets_the_same_inventories_the_callers_options_and_the_version_from_files_last():
    cli = {"extra_vars": ("@/home/me/secrets.yml", "vllm_cluster_image=lab/runtime:2"),
           "vault_password_files": ("~/.vault",), "vault_ids": (), "private_key_file": "/k", "remote_user": "ops",
           "connection": "ssh", "timeout": 10, "ssh_common_args": "-o ProxyJump=bastion", "become": True,
           "become_user": "root", "become_method": "sudo", "forks": 5, "subset": "spark-1", "tags": ("vllm",),
           "check": True}
    passed = _upgrade.passed_on(cli)
    assert passed == ["--vault-password-file", "~/.vault", "--private-key", "/k", "-u", "ops", "-c", "ssh", "-T", "10",
                      "--ssh-common-args", "-o ProxyJump=bastion", "--become-method", "sudo", "--become-user", "root",
                      "--forks", "5", "--become"]
    given = _upgrade.extra_vars(cli)
    assert given == ["@/home/me/secrets.yml", "vllm_cluster_image=lab/runtime:2"]
    argv = _upgrade.playbook_argv("/venv/bin/python3", "/c/playbooks/site.yml", ["/inv/a", "/inv/b"], passed,
                                  ["/r/forward.json"], 6, given)
    assert argv[:9] == ["/venv/bin/python3", "-m", "ansible", "playbook", "/c/playbooks/site.yml", "-i", "/inv/a",
                        "-i", "/inv/b"]
    assert argv[-7:-3] == ["-e", "@/home/me/secrets.yml", "-e", "vllm_cluster_image=lab/runtime:2"]
    # the version's file comes after the caller's -e: it wins
    assert argv[-3:] == ["-e", "@/r/forward.json", "-vvvv"]
    assert "--limit" not in argv and "--tags" not in argv and "--check" not in argv
    assert "-v" not in _upgrade.playbook_argv("p", "s", ["i"], [], [], 0)


@pytest.mark.parametrize("cli, refused", [
    ({"ask_vault_pass": True}, "--ask-vault-pass"),
    ({"ask_pass": True, "become_ask_pass": True}, "--ask-pass, --ask-become-pass"),
    ({"vault_ids": ("dev@prompt",)}, "--vault-id dev@prompt"),
    ({"ask_vault_pass": False, "vault_ids": ("dev@/home/me/pw",)}, None),
])
def test_a_run_that_asked_for_a_password_cannot_start_the_inner_runs(cli, refused):
    message = _upgrade.prompts_asked(cli)
    if refused is None:
        assert message == ""
    else:
        assert message.startswith("[F30] the upgrade's site.yml runs cannot answer a prompt (" + refused + ")")


@pytest.mark.parametrize("changes, named", [
    ({"vllm_server_extra_args": ["--api-key", "s3cret"]}, "--api-key"),
    ({"vllm_server_extra_args": ["--hf-token=hf_x"]}, "--hf-token"),
    ({"vllm_server_env": {"HTTPS_PROXY": "http://user:pw@proxy:3128"}}, "HTTPS_PROXY"),
])
def test_a_secret_in_the_serving_settings_is_never_recorded(changes, named):
    with pytest.raises(UpgradeError, match=named) as refused:
        _upgrade.version_values({"spark-1": version(**changes)}, "spark-1")
    assert "s3cret" not in str(refused.value) and "pw@" not in str(refused.value)


@pytest.mark.parametrize("changes", [
    {"vllm_server_extra_args": ["--chat-template", "{{ messages }}"]},
    {"vllm_server_env": {"X": "{% if true %}y{% endif %}"}},
    {"vllm_server_served_model_name": "{# note #}m"},
])
def test_template_text_in_a_version_is_refused(changes):
    with pytest.raises(UpgradeError, match=r"\[F30\] vllm_server_\w+ holds template text"):
        _upgrade.version_values({"spark-1": version(**changes)}, "spark-1")


def test_the_failures_of_a_real_inner_run_are_read_from_its_output(tmp_path):
    """A real ansible-playbook run with the callback settings playbook_run gives it."""
    playbook = tmp_path / "p.yml"
    playbook.write_text("""
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Check the image
      ansible.builtin.assert:
        that: false
        fail_msg: "[F11] spark-1: import ray fails inside lab/runtime:2"
        quiet: true
""")
    env = {"ANSIBLE_STDOUT_CALLBACK": "default", "ANSIBLE_CALLBACK_RESULT_FORMAT": "json",
           "ANSIBLE_CALLBACK_FORMAT_PRETTY": "false", "ANSIBLE_NOCOLOR": "1", "PATH": "/usr/bin:/bin",
           "HOME": str(tmp_path), "ANSIBLE_LOCALHOST_WARNING": "false", "ANSIBLE_INVENTORY_UNPARSED_WARNING": "false"}
    argv = _upgrade.playbook_argv(sys.executable, str(playbook), ["localhost,"], [], [], 0)
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert _upgrade.failures(done.stdout.splitlines()) == [
        "localhost: [F11] spark-1: import ray fails inside lab/runtime:2 (task: Check the image)"]


def test_the_report_says_where_it_failed_what_was_restored_and_where_the_logs_are():
    target = _upgrade.version_values({"spark-1": version(vllm_cluster_image="lab/runtime:2")}, "spark-1")
    plan = _upgrade.plan(record(), target, {"spark-1": NEW_ID})
    deploy = _upgrade.report(plan, "deploy", ["spark-1: vLLM exited (task: Wait)"], True, [], "it answers 4 of 4",
                             ["/r/forward.log", "/r/back.log"])
    assert deploy.startswith("[F30] the upgrade to lab/runtime:2, model org/model@main failed while deploying it")
    assert f"rolled back to lab/runtime:1 ({OLD_ID[7:19]})" in deploy and "it answers 4 of 4" in deploy
    assert "spark-1: vLLM exited" in deploy and "/r/forward.log, /r/back.log" in deploy
    accept = _upgrade.report(plan, "accept", ["slower"], True, [], "ok", ["l"])
    assert "deployed but was not accepted (fixed prompts and the benchmark)" in accept
    both = _upgrade.report(plan, "deploy", ["boom"], False, ["also boom"], "", ["l"])
    assert "the way back to lab/runtime:1" in both and "also boom" in both and "may be down" in both
