"""The sentences the roles name by key (filter `message`, module_utils/_messages.py): every key a role or playbook
names is in its table and gets exactly the fields its sentence asks for, so a typo or a field left out fails here, not
in front of a user on the failure path it reports; the sentences that end a run name the host where they have one and
say the fix."""

from __future__ import annotations

import pathlib
import re

import pytest
import yaml

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._messages import fields, message, sentence

ROOT = pathlib.Path(__file__).resolve().parents[2]
CALL = re.compile(r"'([a-z][a-z0-9_]*\.[A-Za-z][A-Za-z0-9_]*)'\s*\|\s*inferops\.vllm_cluster\.message\b(\()?")
KWARG = re.compile(r"([a-z_][a-z0-9_]*)\s*=(?!=)")


def arguments(text: str, start: int) -> str:
    """The text of a call's arguments from the character after its `(` to the matching `)`."""
    depth = 1
    for index in range(start, len(text)):
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return text[start:index]
    raise AssertionError(f"unbalanced call at {start}")


def top_level_names(args: str) -> set[str]:
    """The keyword arguments' names at the call's own level (not those of a call inside an argument)."""
    names, depth = set(), 0
    for index, char in enumerate(args):
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(char, 0)
        if depth == 0 and (index == 0 or not (args[index - 1].isalnum() or args[index - 1] == "_")):
            found = KWARG.match(args, index)
            if found:
                names.add(found.group(1))
    return names


def calls():
    """(file:line, key, fields given) for every message call in the roles' and playbooks' YAML."""
    found = []
    for path in sorted(list((ROOT / "roles").rglob("*.yml")) + list((ROOT / "playbooks").rglob("*.yml"))):
        text = path.read_text()
        for call in CALL.finditer(text):
            given = top_level_names(arguments(text, call.end())) if call.group(2) else set()
            found.append((f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, call.start()) + 1}", call.group(1), given))
    return found


CALLS = calls()


def test_the_roles_name_messages_by_key():
    assert len(CALLS) >= 20, CALLS


@pytest.mark.parametrize(("where", "key", "given"), CALLS, ids=[where for where, _key, _given in CALLS])
def test_every_key_a_role_names_is_in_its_table_and_gets_exactly_its_fields(where, key, given):
    assert given == fields(key), f"{where}: {key} asks for {sorted(fields(key))}, given {sorted(given)}"
    assert message(key, **{name: f"<{name}>" for name in given})


@pytest.mark.parametrize("key", sorted({key for _where, key, _given in CALLS}))
def test_a_sentence_that_ends_a_run_names_the_host_and_the_fix(key):
    text = sentence(key)
    # notes and warnings say what is, not what stopped the run
    if text.startswith(("NOTE ", "WARNING ", "Ray token: ", "Weights are not staged")) or key == "settings.PRIVATE_COMMON":
        return
    reports = ("START_FAILED", "DID_NOT_START", "DID_NOT_COME_UP")  # what failed, in the failing tool's own words
    assert "{host}" in text or key.startswith("weights."), key
    assert "Fix:" in text or key.split(".")[1].endswith(reports), key


def test_the_guide_quotes_every_sentence_a_role_names_as_the_code_holds_it():
    guide = (ROOT / "docs" / "troubleshooting.md").read_text()
    missing = sorted({key for _where, key, _given in CALLS if sentence(key) not in guide})
    assert not missing, f"docs/troubleshooting.md does not quote {missing}"


@pytest.mark.parametrize(("key", "values", "problem"), [
    ("runtime", {}, "is not TABLE.NAME"),
    ("nothing.HERE", {}, "there is no module_utils/_nothing.py"),
    ("guide.HERE", {}, "module_utils/_guide.py has no MESSAGES table"),
    ("runtime.NO_SUCH", {}, "no NO_SUCH in module_utils/_runtime.py's MESSAGES"),
    ("runtime.NO_NVIDIA_CTK", {}, "asks for ['host'], given []"),
    ("runtime.NO_NVIDIA_CTK", {"host": "spark-1", "extra": 1}, "given ['extra', 'host']"),
])
def test_a_key_or_fields_that_do_not_fit_are_refused_naming_what_is_wrong(key, values, problem):
    with pytest.raises(ValueError) as error:
        message(key, **values)
    assert problem in str(error.value)


def test_a_sentence_naming_a_failure_mode_cites_its_section_of_the_guide_and_only_that():
    cited = message("env.F7_CONTAINER", **{name: f"<{name}>" for name in fields("env.F7_CONTAINER")})
    assert cited.startswith("[F7] <host>: ") and cited.endswith("docs/troubleshooting.md#f7")
    assert "troubleshooting" not in message("runtime.NO_NVIDIA_CTK", host="spark-1")


def task_lists(document):
    """Every task list of a roles' task file or a playbook, blocks' included."""
    plays = document if isinstance(document, list) else []
    for item in plays:
        if isinstance(item, dict) and any(key in item for key in ("tasks", "pre_tasks", "post_tasks", "hosts")):
            for key in ("pre_tasks", "tasks", "post_tasks"):
                yield from blocks(item.get(key) or [])
        else:
            yield from blocks([item])


def blocks(tasks):
    for task in tasks:
        if isinstance(task, dict):
            yield task
            for key in ("block", "rescue", "always"):
                yield from blocks(task.get(key) or [])


def test_a_failure_written_in_yaml_is_one_expression_the_words_are_pythons():
    """A fail's msg or an assert's fail_msg is one Jinja expression (a table's sentence, a filter's answer), never
    prose around values: the words of what went wrong live in the Python tables."""
    prose = []
    for path in sorted(list((ROOT / "roles").rglob("tasks/*.yml")) + list((ROOT / "playbooks").glob("*.yml"))):
        for task in task_lists(yaml.safe_load(path.read_text())):
            for module, key in (("ansible.builtin.fail", "msg"), ("ansible.builtin.assert", "fail_msg")):
                text = str((task.get(module) or {}).get(key, "{{ x }}")).strip()
                if not (text.startswith("{{") and text.endswith("}}") and text.count("{{") == 1):
                    prose.append(f"{path.relative_to(ROOT)}: {task.get('name')}")
    assert not prose, prose
