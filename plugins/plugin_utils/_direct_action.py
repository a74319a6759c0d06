# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A module's logic run by the node's Python directly: the controller side (module_utils/_direct.py says why).

A read-only module of the collection whose logic lives in module_utils as ARGUMENT_SPEC and run(params, node), with no
import from ansible in it or in what it imports, gets an action plugin (DirectAction) that checks the arguments on the
controller, then sends that logic's source, the arguments and a few lines that load it (the program) to the node's
Python in one pipelined command, as Ansible sends a module, and reads back the one JSON document it prints. Where
that does not apply (pipelining off or unavailable, async, the host's Python not known yet: Ansible's interpreter
discovery runs with the first module), the module runs as any module does: the same logic, the same result.
Private to the collection."""

from __future__ import annotations

import functools
import importlib
import json
import os
import re
import typing as t

from ansible.errors import AnsibleActionFail
from ansible.executor.module_common import _get_shebang
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.common.json import Direction, get_module_encoder
from ansible.plugins.action import ActionBase
from ansible.vars.clean import remove_internal_keys

PACKAGE = "ansible_collections.inferops.vllm_cluster.plugins.module_utils"
MODULE_UTILS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "module_utils")
# The packages above the collection's module_utils, which the program makes (empty) for its imports to resolve.
PACKAGES = tuple(".".join(PACKAGE.split(".")[:depth]) for depth in range(1, PACKAGE.count(".") + 2))

# First drops the working directory from sys.path (`python -` puts it there as '', PYTHONPATH may as '.', and the
# command runs in the remote user's home over SSH: a json.py there must not be what the program imports), then loads
# the collection's sources from a table before anything else may (a finder first on sys.meta_path, which also refuses
# `ansible`: the logic must not run whatever Ansible the node has), each with a __file__ that names no file and its
# lines in linecache (what reads its own source, as _link_gate does, and a traceback find them there, never on the
# node's disk), and prints the entry's result (_direct.serve). Python 3.8+, as ansible-core 2.19 needs on a node.
PROGRAM = """import os, sys
try:
    HERE = os.getcwd()
except OSError:
    HERE = None
sys.path[:] = [entry for entry in sys.path if entry and os.path.abspath(entry) != HERE]
import importlib.abc, importlib.machinery, json, linecache
SOURCES = json.loads({sources!r})
PACKAGES = {packages!r}
class CollectionSources(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name == "ansible" or name.startswith("ansible."):
            raise ImportError("the collection's direct logic imports nothing from ansible: " + name)
        if name not in SOURCES and name not in PACKAGES:
            return None
        spec = importlib.machinery.ModuleSpec(name, self, origin="<" + name + ">", is_package=name in PACKAGES)
        spec.has_location = name in SOURCES
        return spec
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        if module.__name__ in SOURCES:
            source, origin = SOURCES[module.__name__], module.__spec__.origin
            linecache.cache[origin] = (len(source), None, source.splitlines(True), origin)
            exec(compile(source, origin, "exec"), module.__dict__)
sys.meta_path.insert(0, CollectionSources())
from {package}._direct import serve
serve({entry!r}, "run", json.loads({params!r}))
"""


class NotDirect(Exception):
    """The logic cannot run without Ansible's module runtime (it imports from ansible): run the module."""


# An import statement's modules at a line's start: `import a, b.c as d`, `from a import x` (and, for `from PACKAGE import
# (_a, _b)`, its names). Read by a pattern, not ast: parsing the sources took 60 ms of the controller's CPU a task. A
# unit test holds the two to the same answer for every module_utils file, and fails on a relative import or on an
# `import a, b` or `from PACKAGE import (...)` split over lines, which the pattern would not read.
IMPORT = re.compile(r"^[ \t]*(?:import[ \t]+([\w. \t,]+)"
                    r"|from[ \t]+([\w.]+)[ \t]+import[ \t]+\(?([\w \t,]*))", re.M)


def _imports(name: str, source: str) -> set[str]:
    """The collection's module_utils that source imports, anywhere in it; NotDirect where it imports ansible."""
    found = set()
    for plain, origin, names in IMPORT.findall(source):
        if plain:
            modules = [alias.split()[0] for alias in plain.split(",") if alias.strip()]
        else:
            modules = [origin] + ([f"{origin}.{alias.split()[0]}" for alias in names.split(",") if alias.strip()]
                                  if origin == PACKAGE else [])
        for module in modules:
            if module == "ansible" or module.startswith("ansible."):
                raise NotDirect(f"{name} imports {module}")
            if module.startswith(PACKAGE + "."):
                found.add(module)
    return found


@functools.lru_cache(maxsize=None)
def sources(entry: str) -> dict[str, str]:
    """The source of module_utils module entry (a name in PACKAGE) and of every collection module_utils it imports,
    by full name; NotDirect where one of them imports ansible."""
    wanted, found = [f"{PACKAGE}.{entry}", f"{PACKAGE}._direct"], {}
    while wanted:
        name = wanted.pop()
        if name in found:
            continue
        path = os.path.join(MODULE_UTILS, name[len(PACKAGE) + 1:].replace(".", os.sep) + ".py")
        try:
            with open(path, encoding="utf-8") as handle:
                found[name] = handle.read()
        except OSError as error:
            raise NotDirect(f"no source for {name}: {error}") from None
        wanted.extend(_imports(name, found[name]))
    return found


def program(entry: str, params: t.Mapping[str, t.Any]) -> str:
    """The Python program that prints module_utils entry's run(params) on the node, as one JSON document."""
    encoded = json.dumps(dict(params), cls=get_module_encoder("legacy", Direction.CONTROLLER_TO_MODULE))
    return PROGRAM.format(sources=json.dumps(sources(entry)), packages=PACKAGES, package=PACKAGE,
                          entry=f"{PACKAGE}.{entry}", params=encoded)


def parsed(action: ActionBase, shebang: str, answer: dict[str, t.Any]) -> dict[str, t.Any]:
    """The result the program printed, read as Ansible reads a module's (text before the JSON dropped with a warning;
    no such interpreter, a traceback or no JSON: a failure with the node's words), internal keys removed."""
    action._used_interpreter = shebang
    result = action._parse_returned_data(answer, "legacy")
    remove_internal_keys(result)
    return result


def command(action: ActionBase, task_vars: t.Mapping[str, t.Any]) -> tuple[str, str] | None:
    """The command that runs a program piped to the node's Python, as Ansible's pipelining runs a module (the
    interpreter it would choose, the task's environment, become); None where it would not pipeline, or does not
    know the Python yet (its discovery runs with a module). With it, the shebang it runs (for parsed())."""
    if action._task.async_val or not action._is_pipelining_enabled("new"):
        return None
    host_vars = task_vars
    if action._task.delegate_to:
        host_vars = (task_vars.get("ansible_delegated_vars") or {}).get(action._task.delegate_to)
        if host_vars is None:
            return None
    try:
        local = bool(getattr(action._connection, "_remote_is_local", False))
        shebang, _interpreter = _get_shebang("/usr/bin/python", host_vars, action._templar, remote_is_local=local)
    except Exception:  # pylint: disable=broad-except  # discovery required, or Ansible's private helper moved
        return None
    environment = action._compute_environment_string()
    return action._connection._shell.build_module_command(environment, shebang, "").strip(), shebang


def controller_spec(spec: t.Mapping[str, t.Mapping[str, t.Any]]) -> dict[str, dict[str, t.Any]]:
    """spec as the controller checks it: a `path` option is a string here (its `~` and $VARS are the node's, expanded
    there: _direct.node_params)."""
    return {name: {key: ("str" if key in ("type", "elements") and value == "path" else value)
                   for key, value in option.items()}
            for name, option in spec.items()}


def validated(module: str, spec: t.Mapping[str, t.Any], params: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """params as module would hold them under spec (defaults filled, types converted); AnsibleActionFail with the
    spec's words where they do not fit, as the module would fail."""
    checked = ArgumentSpecValidator(controller_spec(spec)).validate(dict(params))
    if checked.error_messages:
        raise AnsibleActionFail(f"{module}: {'; '.join(checked.error_messages)}")
    return checked.validated_parameters


def node_result(action: ActionBase, module: str, entry: str, args: t.Mapping[str, t.Any],
                task_vars: dict[str, t.Any]) -> dict[str, t.Any]:
    """Module's result for args (as a task gives them), from entry's logic run directly by the node's Python where
    that applies (args checked here against entry's ARGUMENT_SPEC), else from the module run as Ansible runs one
    (async included)."""
    run_by = command(action, task_vars)
    if run_by is not None:
        spec = importlib.import_module(f"{PACKAGE}.{entry}").ARGUMENT_SPEC
        try:
            text = program(entry, validated(module, spec, args))
        except NotDirect:
            run_by = None
    if run_by is None:
        wrap_async = bool(action._task.async_val) and not action._connection.has_native_async
        return action._execute_module(module_name=module, module_args=dict(args), task_vars=task_vars,
                                      wrap_async=wrap_async)
    answer = action._low_level_execute_command(run_by[0], sudoable=True, in_data=text.encode("utf-8"))
    return parsed(action, run_by[1], answer)


class DirectAction(ActionBase):
    """The action of a read-only module run directly where it can be: MODULE its name, ENTRY its module_utils."""

    MODULE = ""
    ENTRY = ""
    TRANSFERS_FILES = False
    _supports_check_mode = True
    _supports_async = True  # as the module: run as one, by node_result

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        result.update(node_result(self, self.MODULE, self.ENTRY, self._task.args, task_vars))
        return result
