"""The sentences the roles name by key (filter `message`, module_utils/_messages.py): every key a role or playbook
names is in its table and gets exactly the fields its sentence asks for, so a typo or a field left out fails here, not
in front of a user on the failure path it reports; the sentences that end a run name the host where they have one and
say the fix."""

from __future__ import annotations

import pathlib
import re

import pytest
import yaml
from ansible.errors import AnsibleError
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._messages import fields, message, sentence

ROOT = pathlib.Path(__file__).resolve().parents[2]
CALL = re.compile(r"\|\s*inferops\.vllm_cluster\.message\b(\()?")
KEY_LITERAL = re.compile(r"""['"]([a-z][a-z0-9_]*\.[A-Za-z][A-Za-z0-9_]*)['"]""")
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


def operand(text: str, end: int) -> str:
    """The filter's operand ending before `end`: a postfix chain of quoted strings, bracketed groups and names (a
    quoted key, a parenthesized choice between keys, a table of keys indexed by a value)."""
    index = end
    while index and text[index - 1].isspace():
        index -= 1
    start, closing = index, {")": "(", "]": "[", "}": "{"}
    while start:
        char = text[start - 1]
        if char in "'\"":
            start = text.rindex(char, 0, start - 1)
        elif char in closing:
            depth = 0
            for start in range(start - 1, -1, -1):
                depth += 1 if text[start] == char else -1 if text[start] == closing[char] else 0
                if depth == 0:
                    break
        elif char.isalnum() or char in "_.":
            start -= 1
        else:
            break
    return text[start:index]


def calls():
    """(file:line, key, fields given) for every key of every message call in the roles' and playbooks' YAML: a call
    whose operand chooses between keys counts each with the call's fields."""
    found = []
    for path in sorted(list((ROOT / "roles").rglob("*.yml")) + list((ROOT / "playbooks").rglob("*.yml"))):
        text = path.read_text()
        for call in CALL.finditer(text):
            given = top_level_names(arguments(text, call.end())) if call.group(1) else set()
            keys = KEY_LITERAL.findall(operand(text, call.start()))
            assert keys, f"{path}: a message call names no key literally"
            line = text.count(chr(10), 0, call.start()) + 1
            found += [(f"{path.relative_to(ROOT)}:{line}", key, given) for key in keys]
    return found


CALLS = calls()


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


def test_every_use_of_the_filter_is_a_call_read_here():
    """Each mention of the filter in the roles' and playbooks' YAML is a call calls() reads (its keys found, or it
    fails): none is left unchecked, as a key held in a variable would be."""
    paths = list((ROOT / "roles").rglob("*.yml")) + list((ROOT / "playbooks").rglob("*.yml"))
    mentions = sum(path.read_text().count("inferops.vllm_cluster.message") for path in paths)
    calls_read = sum(len(CALL.findall(path.read_text())) for path in paths)
    assert mentions == calls_read and mentions >= 29, (mentions, calls_read)


@pytest.mark.parametrize(("where", "key", "given"), CALLS, ids=[where for where, _key, _given in CALLS])
def test_every_key_a_role_names_is_in_its_table_and_gets_exactly_its_fields(where, key, given):
    assert given == fields(key), f"{where}: {key} asks for {sorted(fields(key))}, given {sorted(given)}"
    assert message(key, **{name: f"<{name}>" for name in given})


def failure_keys():
    """The keys a fail's msg or an assert's fail_msg names: sentences that end a run."""
    keys = set()
    for path in sorted(list((ROOT / "roles").rglob("tasks/*.yml")) + list((ROOT / "playbooks").glob("*.yml"))):
        for task in task_lists(yaml.safe_load(path.read_text())):
            for module, field in (("ansible.builtin.fail", "msg"), ("ansible.builtin.assert", "fail_msg")):
                keys |= set(KEY_LITERAL.findall(str((task.get(module) or {}).get(field, ""))))
    return sorted(keys)


@pytest.mark.parametrize("key", failure_keys())
def test_a_sentence_that_ends_a_run_names_the_host_and_the_fix(key):
    text = sentence(key)
    reports = ("START_FAILED", "DID_NOT_START", "DID_NOT_COME_UP")  # what failed, in the failing tool's own words
    assert "{host}" in text or key in ("weights.REVISION_NOT_SERVED", "weights.SOURCE_NOT_AN_ARCHIVE",
                                       "settings.PRIVATE_COMMON"), key  # run once, for the cluster
    assert "Fix:" in text or key.split(".")[1].endswith(reports) or key == "settings.PRIVATE_COMMON", key


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
    # a field with a conversion or a format spec is asked for too, and a value its spec refuses is a ValueError
    ("weights.F17_NOT_A_HUB_ID", {}, "asks for ['model']"),
    ("bench.SLOWER", {name: "x" for name in ("host", "limit", "baseline", "figures")}, "filling it"),
])
def test_a_key_or_fields_that_do_not_fit_are_refused_naming_what_is_wrong(key, values, problem):
    with pytest.raises(ValueError) as error:
        message(key, **values)
    assert problem in str(error.value)


def test_a_sentence_naming_a_failure_mode_cites_its_section_of_the_guide_and_only_that():
    cited = message("env.F7_CONTAINER", **{name: f"<{name}>" for name in fields("env.F7_CONTAINER")})
    assert cited.startswith("[F7] <host>: ") and cited.endswith("docs/troubleshooting.md#f7")
    assert "troubleshooting" not in message("runtime.NO_NVIDIA_CTK", host="spark-1")
    # a value that names a failure mode (docker's error, a log line) brings no citation
    failed = message("container_plan.START_FAILED", host="h", container="c", state="started", error="x [F7] y")
    assert failed.endswith("x [F7] y")


def test_a_message_written_in_yaml_is_one_expression_the_words_are_pythons():
    """A fail's msg, an assert's fail_msg and a debug's msg are each one Jinja expression (a table's sentence, a
    filter's answer), never prose around values: the words a user reads live in the Python tables. A debug may label
    its line WARNING or NOTE."""
    prose = []
    for path in sorted(list((ROOT / "roles").rglob("tasks/*.yml")) + list((ROOT / "playbooks").rglob("*.yml"))):
        for task in task_lists(yaml.safe_load(path.read_text())):
            for module, key in [(f"{prefix}{name}", field) for prefix in ("ansible.builtin.", "")
                                for name, field in (("fail", "msg"), ("assert", "fail_msg"), ("assert", "msg"),
                                                    ("debug", "msg"))]:
                text = str((task.get(module) or {}).get(key, "{{ x }}")).strip()
                if module.endswith("debug"):
                    text = re.sub(r"^(WARNING|NOTE) ", "", text)
                if not (text.startswith("{{") and text.endswith("}}") and text.count("{{") == 1):
                    prose.append(f"{path.relative_to(ROOT)}: {task.get('name')}")
    assert not prose, prose


@pytest.mark.parametrize(("action", "said"), [
    ("keep", "Ray token: the cluster keeps its token."),
    ("rotate", "Ray token: ROTATING the token of the cluster (vllm_cluster_ray_auth_rotate): every Ray and vLLM "
               "container restarts."),
    ("adopt", "Ray token: this controller had none; it takes the one on the head, kept in /ctl/token."),
    ("create", "Ray token: a new cluster; a new token, kept in /ctl/token."),
    ("refuse", None),  # stopped by the task before; here an unknown action is an error, never another's note
])
def test_the_token_note_a_run_prints_is_its_actions_through_ansibles_templating(action, said):
    tasks = yaml.safe_load((ROOT / "roles" / "_common" / "tasks" / "ray_token_decide.yml").read_text())
    note = next(task for task in tasks if task["name"] == "Say where the token comes from")["ansible.builtin.debug"]
    templar = Templar(loader=DataLoader(), variables={"_common_ray_token_new": {"action": action},
                                                      "vllm_cluster_ray_auth_token_file": "/ctl/token"})
    if said is None:
        with pytest.raises(AnsibleError):
            templar.template(trust_as_template(note["msg"]))
    else:
        assert templar.template(trust_as_template(note["msg"])) == said
