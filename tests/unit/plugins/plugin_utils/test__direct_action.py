"""_direct_action: the program that runs a module's logic on the node's Python directly, what it sends and when, and
when the module runs as Ansible runs one instead. The program runs here under a real Python, as a node runs it."""

from __future__ import annotations

import ast
import datetime
import glob
import importlib
import json
import os
import subprocess
import sys
from types import SimpleNamespace
from unittest import mock

import pytest
from ansible.errors import AnsibleActionFail
from ansible.plugins.loader import shell_loader

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _node_state
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._direct import Node, outcome
from ansible_collections.inferops.vllm_cluster.plugins.plugin_utils import _direct_action
from ansible_collections.inferops.vllm_cluster.plugins.plugin_utils._direct_action import (
    MODULE_UTILS,
    PACKAGE,
    DirectAction,
    NotDirect,
    _imports,
    parsed,
    program,
    validated,
)

ACTION_PACKAGE = "ansible_collections.inferops.vllm_cluster.plugins.action"
ACTIONS = os.path.join(os.path.dirname(MODULE_UTILS), "action")
MODULES = os.path.join(os.path.dirname(MODULE_UTILS), "modules")


def direct_actions():
    """Every action of the collection that runs its module's logic directly: (action file, class)."""
    found = []
    for path in sorted(glob.glob(os.path.join(ACTIONS, "*.py"))):
        name = os.path.basename(path)[:-3]
        action = importlib.import_module(f"{ACTION_PACKAGE}.{name}").ActionModule
        if issubclass(action, DirectAction):
            found.append((name, action))
    return found


def ast_imports(source):
    """What _imports reads by its pattern, read by Python's parser: (collection module_utils, imports ansible). A
    relative import, or one whose modules would be split over lines, is an assertion error: the pattern reads only a
    statement's first line (where `from X import (` names its one module X)."""
    found, ansible = set(), False
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            assert not getattr(node, "level", 0), f"line {node.lineno}: a relative import"
            names_modules = isinstance(node, ast.Import) or node.module == PACKAGE
            assert not names_modules or node.end_lineno == node.lineno, f"line {node.lineno}: split over lines"
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module] + ([f"{node.module}.{alias.name}" for alias in node.names]
                                       if node.module == PACKAGE else [])
        else:
            continue
        ansible |= any(module == "ansible" or module.startswith("ansible.") for module in modules)
        found |= {module for module in modules if module.startswith(PACKAGE + ".")}
    return found, ansible


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(MODULE_UTILS, "*.py"))), ids=os.path.basename)
def test_the_import_pattern_reads_what_pythons_parser_reads_in_every_module_util(path):
    with open(path, encoding="utf-8") as handle:
        source = handle.read()
    wanted, ansible = ast_imports(source)
    try:
        assert _imports(path, source) == wanted and not ansible
    except NotDirect:
        assert ansible


def test_the_pattern_refuses_an_ansible_import_anywhere():
    with pytest.raises(NotDirect, match="ansible.module_utils.basic"):
        _imports("x", "def f():\n    from ansible.module_utils.basic import AnsibleModule\n")
    with pytest.raises(NotDirect, match="ansible.x"):
        _imports("x", "import os, ansible.x as y\n")
    assert _imports("x", f"from {PACKAGE} import (_a, _b as b)\n") == {f"{PACKAGE}._a", f"{PACKAGE}._b"}
    assert _imports("x", f"import os, {PACKAGE}._c as c\n") == {f"{PACKAGE}._c"}


def test_every_direct_action_names_a_module_whose_logic_needs_no_ansible():
    actions = direct_actions()
    assert {name for name, _action in actions} >= {"node_state", "rank_env_check", "link_inputs", "port_holders"}
    for name, action in actions:
        assert action.MODULE == f"inferops.vllm_cluster.{name}"
        logic = importlib.import_module(f"{PACKAGE}.{action.ENTRY}")
        assert callable(logic.run) and isinstance(logic.ARGUMENT_SPEC, dict), name
        # the module runs the same logic under the same spec where the action does not run it directly
        with open(os.path.join(MODULES, f"{name}.py"), encoding="utf-8") as handle:
            module = handle.read()
        assert f"from {PACKAGE}.{action.ENTRY} import ARGUMENT_SPEC, run" in module, name
        assert "AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)" in module, name


def run_program(text, cwd, path=None):
    done = subprocess.run([sys.executable, "-"], input=text, capture_output=True, text=True, cwd=cwd,
                          env={"PATH": path or os.environ["PATH"], "HOME": str(cwd)}, check=False)
    return {"rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr}


def test_the_program_returns_what_the_logic_returns_here_and_ignores_files_in_its_working_directory(tmp_path):
    record = tmp_path / "record.json"
    record.write_text('{"id": "c1"}')
    (tmp_path / "json.py").write_text("raise SystemExit('the working directory was imported from')\n")
    (tmp_path / "linecache.py").write_text("raise SystemExit('the working directory was imported from')\n")
    (tmp_path / "ansible_collections").mkdir()
    params = validated("node_state", _node_state.ARGUMENT_SPEC, {"files": [str(record), "~/absent"],
                                                                 "records": [str(record)]})
    answer = json.loads(run_program(program("_node_state", params), tmp_path)["stdout"])
    expected = outcome(f"{PACKAGE}._node_state", "run", dict(params, files=[str(record), f"{tmp_path}/absent"]), Node())
    assert answer.pop("clock") > 0 and expected.pop("clock") > 0
    assert answer == dict(expected, files={str(record): expected["files"][str(record)],
                                           "~/absent": expected["files"][f"{tmp_path}/absent"]}), answer
    assert answer["records"] == {str(record): {"id": "c1"}}


def test_a_source_that_reads_its_own_source_finds_it_in_the_program(tmp_path):
    # _link_gate hashes its probe program's source at import (inspect.getsource): from the program, never the disk
    docker = tmp_path / "bin" / "docker"
    docker.parent.mkdir()
    docker.write_text("#!/bin/sh\necho 'Error: No such image: x' >&2\nexit 1\n")
    docker.chmod(0o755)
    env = tmp_path / "node.env"
    env.write_text("NCCL_SOCKET_IFNAME=ic0\n")
    params = validated("link_inputs", importlib.import_module(f"{PACKAGE}._link_inputs").ARGUMENT_SPEC,
                       {"image": "inferops-absent-image", "env_file": str(env)})
    answer = json.loads(run_program(program("_link_inputs", params), tmp_path,
                                    f"{docker.parent}:{os.environ['PATH']}")["stdout"])
    here = outcome(f"{PACKAGE}._link_inputs", "run", params, SimpleNamespace(
        run_command=lambda argv: (1, "", "Error: No such image: x"), get_bin_path=lambda *a, **k: str(docker)))
    assert answer == here and answer["image_id"] == "" and len(answer["env_sha256"]) == 64, answer


def test_every_direct_actions_program_loads_its_logic_in_a_python_without_ansible(tmp_path):
    for name, action in direct_actions():
        text = program(action.ENTRY, {}).rsplit("serve(", 1)[0]
        text += f"import importlib\nprint(callable(importlib.import_module({PACKAGE + '.' + action.ENTRY!r}).run))\n"
        text += "import ansible\n"  # the node's Ansible, where one is installed, is refused
        answer = run_program(text, tmp_path)
        assert answer["stdout"] == "True\n", (name, answer)
        assert "ImportError: the collection's direct logic imports nothing from ansible: ansible" in answer["stderr"]


def node_state_action(delegate_to=None, pipelining=True, async_val=0):
    task = mock.MagicMock(args={"files": ["/etc/hostname"]}, async_val=async_val, delegate_to=delegate_to,
                          check_mode=False, diff=False)
    connection = mock.MagicMock(has_native_async=False, _remote_is_local=False)
    connection._shell = shell_loader.get("sh")
    action = importlib.import_module(f"{ACTION_PACKAGE}.node_state").ActionModule(
        task, connection, mock.MagicMock(check_mode=False), mock.MagicMock(), mock.MagicMock(), mock.MagicMock())
    action._is_pipelining_enabled = lambda style, wrap_async=False: pipelining and style == "new"
    action._compute_environment_string = lambda: ""
    action._execute_module = mock.MagicMock(return_value={"changed": False, "by": "module"})
    action._low_level_execute_command = mock.MagicMock(
        return_value={"rc": 0, "stdout": '{"changed": false, "by": "program"}', "stderr": ""})
    return action


@pytest.mark.parametrize(("answer", "result"), [
    ({"rc": 0, "stdout": '{"changed": false, "x": 1}', "stderr": ""}, {"changed": False, "x": 1}),
    # a login script's echo before the JSON, as Ansible drops it from a module's output
    ({"rc": 0, "stdout": 'welcome to spark-1\n{"changed": false, "x": 1}', "stderr": ""}, {"changed": False, "x": 1}),
    ({"rc": 1, "stdout": "", "stderr": "Traceback (most recent call last):\n  ...\nKeyError: 'x'"},
     "Module result deserialization failed"),
    ({"rc": 127, "stdout": "", "stderr": "/bin/sh: 1: /usr/bin/python3: not found\n"},
     "The module interpreter '/usr/bin/python3' was not found"),
], ids=["result", "text before the json", "traceback", "no python"])
def test_what_the_node_printed_is_read_as_ansible_reads_a_modules_output(answer, result):
    got = parsed(node_state_action(), "#!/usr/bin/python3", dict(answer))
    if isinstance(result, dict):
        assert {key: value for key, value in got.items() if key != "_ansible_parsed"} == result
        assert got["_ansible_parsed"] is True
    else:
        assert got["failed"] is True and result in got["msg"], got
        assert got["module_stderr"] == answer["stderr"] and got["rc"] == answer["rc"]


@pytest.mark.parametrize(("case", "kwargs", "known", "by"), [
    ("pipelined, the python known", {}, True, "program"),
    ("delegated: the delegate's python", {"delegate_to": "spark-2"}, True, "program"),
    ("async", {"async_val": 30}, True, "module"),
    ("pipelining off", {"pipelining": False}, True, "module"),
    ("delegated, no vars for the delegate", {"delegate_to": "spark-3"}, True, "module"),
    ("the python not discovered yet", {}, False, "module"),
])
def test_the_logic_runs_directly_only_where_ansible_would_pipeline_a_module_to_a_known_python(
        monkeypatch, case, kwargs, known, by):
    asked = []

    def get_shebang(interpreter, host_vars, templar, remote_is_local=False):
        asked.append(host_vars["inventory_hostname"])
        if not known:
            raise RuntimeError("interpreter discovery needed")
        return "#!/usr/bin/python3", "/usr/bin/python3"

    monkeypatch.setattr(_direct_action, "_get_shebang", get_shebang)
    action = node_state_action(**kwargs)
    task_vars = {"inventory_hostname": "spark-1", "ansible_facts": {},
                 "ansible_delegated_vars": {"spark-2": {"inventory_hostname": "spark-2", "ansible_facts": {}}}}
    result = action.run(task_vars=task_vars)
    assert result["by"] == by, case
    if kwargs.get("delegate_to") == "spark-2":
        assert asked == ["spark-2"], case
    if by == "module":
        action._execute_module.assert_called_once_with(module_name="inferops.vllm_cluster.node_state",
                                                       module_args={"files": ["/etc/hostname"]}, task_vars=task_vars,
                                                       wrap_async=bool(kwargs.get("async_val")))
        action._low_level_execute_command.assert_not_called()
    else:
        (command,), options = action._low_level_execute_command.call_args
        assert command == "/usr/bin/python3" and options["sudoable"] is True
        params = validated("inferops.vllm_cluster.node_state", _node_state.ARGUMENT_SPEC, {"files": ["/etc/hostname"]})
        assert options["in_data"] == program("_node_state", params).encode()
        action._execute_module.assert_not_called()


def test_arguments_the_spec_refuses_fail_the_task_naming_the_module():
    with pytest.raises(AnsibleActionFail, match=r"^inferops.vllm_cluster.node_state: .*bogus"):
        validated("inferops.vllm_cluster.node_state", _node_state.ARGUMENT_SPEC, {"bogus": 1})


def test_parameters_go_as_ansible_sends_a_modules_a_date_as_text():
    text = program("_node_state", {"pinned_env": {"c": {"SINCE": datetime.date(2026, 1, 2)}}})
    assert '"2026-01-02"' in text
