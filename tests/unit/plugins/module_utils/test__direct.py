"""_direct: what a module's logic asks of the node where no AnsibleModule runs (commands, executables, `path`
options), with AnsibleModule's meaning, against real processes and files."""

from __future__ import annotations

import os

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._direct import (
    SBIN_DIRS,
    ModuleError,
    Node,
    node_params,
    outcome,
)


@pytest.mark.parametrize(("args", "data", "answer"), [
    (["sh", "-c", "echo out; echo err >&2; exit 3"], None, (3, "out\n", "err\n")),
    ("sh -c 'echo one two'", None, (0, "one two\n", "")),
    (["cat"], "to stdin", (0, "to stdin\n", "")),
    # without data the command's stdin is empty, not the program's pipe
    (["cat"], None, (0, "", "")),
    (["sh", "-c", "printf '\\377'"], None, (0, "\udcff", "")),
    (["echo", None, "~", "$INFEROPS_WORD"], None, (0, "/home/node-user word\n", "")),
], ids=["exit and streams", "a string split as a shell would", "data with a newline", "empty stdin",
        "bytes not utf-8 as surrogates", "None dropped, ~ and $VARS expanded"])
def test_run_command_answers_as_ansiblemodule_does(monkeypatch, args, data, answer):
    monkeypatch.setenv("HOME", "/home/node-user")
    monkeypatch.setenv("INFEROPS_WORD", "word")
    assert Node().run_command(args, data=data) == answer


def test_run_command_takes_a_working_directory_and_more_environment(tmp_path):
    assert Node().run_command(["sh", "-c", "pwd; echo $EXTRA"], cwd=str(tmp_path), environ_update={"EXTRA": "x"}) == \
        (0, f"{tmp_path}\n" + "x\n", "")


def test_a_command_that_cannot_start_or_fails_under_check_rc_fails_the_module(tmp_path):
    with pytest.raises(ModuleError) as missing:
        Node().run_command([str(tmp_path / "nope")])
    assert missing.value.extra["rc"] == 2 and str(tmp_path / "nope") in missing.value.extra["cmd"]
    with pytest.raises(ModuleError) as failed:
        Node().run_command(["sh", "-c", "echo why >&2; exit 4"], check_rc=True)
    assert str(failed.value) == "why" and failed.value.extra["rc"] == 4


def test_get_bin_path_finds_executables_on_path_then_in_sbin(tmp_path, monkeypatch):
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "tool").write_text("#!/bin/sh\n")
    (folder / "tool").chmod(0o755)
    (folder / "plain").write_text("not executable")
    (folder / "dir").mkdir()
    monkeypatch.setenv("PATH", str(folder))
    node = Node()
    assert node.get_bin_path("tool") == str(folder / "tool")
    assert node.get_bin_path("plain") is None and node.get_bin_path("dir") is None
    # beyond PATH, the sbin directories (ip, ss, nft live there), as AnsibleModule looks
    in_sbin = [os.path.join(folder, "ip") for folder in SBIN_DIRS if os.access(os.path.join(folder, "ip"), os.X_OK)]
    assert node.get_bin_path("ip") == (in_sbin[0] if in_sbin else None)
    with pytest.raises(ModuleError) as error:
        node.get_bin_path("absent-tool", required=True)
    assert '"absent-tool"' in str(error.value) and str(folder) in str(error.value)


def test_path_options_are_expanded_on_the_node_and_nothing_else(monkeypatch):
    monkeypatch.setenv("HOME", "/home/node-user")
    monkeypatch.setenv("CACHE", "/var/cache")
    spec = {"one": {"type": "path"}, "many": {"type": "list", "elements": "path"}, "text": {"type": "str"},
            "unset": {"type": "path", "default": ""}}
    params = {"one": "~/x", "many": ["$CACHE/y", "/z"], "text": "~/kept", "unset": ""}
    assert node_params(spec, params) == {"one": "/home/node-user/x", "many": ["/var/cache/y", "/z"], "text": "~/kept",
                                         "unset": ""}


ARGUMENT_SPEC = {"where": {"type": "path"}}  # of entry() below, which outcome() reads as a module's


def entry(params, node):  # a module's run(): its params (path expanded) and what it asks of the node
    return {"where": params["where"], "answer": node.run_command(["true"])}


class Failing:
    def run_command(self, *args, **kwargs):
        raise ModuleError("no docker", rc=2)


def test_outcome_is_the_entrys_result_or_its_module_error_as_a_failed_result(monkeypatch):
    monkeypatch.setenv("HOME", "/home/node-user")
    assert outcome(__name__, "entry", {"where": "~/w"}, Node()) == {"where": "/home/node-user/w", "answer": (0, "", "")}
    assert outcome(__name__, "entry", {"where": "/w"}, Failing()) == {"failed": True, "msg": "no docker", "rc": 2}
