"""Env files: what --diff shows of them (every name and value but the secrets), and how they are written."""

from __future__ import annotations

import os
import stat

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._env_file import (
    mask_env_text,
    masked_diff,
    plan,
    read_existing,
    write_atomically,
)


@pytest.mark.parametrize(
    "text, marked, expected",
    [
        ("PROBE=on\n", [], "PROBE=on\n"),
        ("HF_TOKEN=hf_abc\nNCCL_SOCKET_IFNAME=eth1\n", [], "HF_TOKEN=****\nNCCL_SOCKET_IFNAME=eth1\n"),
        ("WANDB_API_KEY=k1\nDB_PASSWORD=p\nX_SECRET=s\nAWS_CREDENTIALS=c\nPASSWD=w\n", [],
         "WANDB_API_KEY=****\nDB_PASSWORD=****\nX_SECRET=****\nAWS_CREDENTIALS=****\nPASSWD=****\n"),
        ("lower_token=t\n", [], "lower_token=****\n"),
        # a secret not named like one, marked by the operator
        ("MY_CONF=hunter2\nOTHER=1\n", ["MY_CONF"], "MY_CONF=****\nOTHER=1\n"),
        ("HTTPS_PROXY=http://user:pw@proxy:3128\n", [], "HTTPS_PROXY=http://user:****@proxy:3128\n"),
        # a value with '=' in it is masked whole
        ("API_KEY=a=b=c\n", [], "API_KEY=****\n"),
        # comments stay, even one that reads like an assignment
        ("# HF_TOKEN=is read from a file\n", [], "# HF_TOKEN=is read from a file\n"),
        ("", [], ""),
        ("NO_NEWLINE_KEY=x", [], "NO_NEWLINE_KEY=****"),
    ],
)
def test_what_the_diff_shows(text, marked, expected):
    assert mask_env_text(text, marked) == expected


def test_writing_is_atomic_root_only_and_leaves_nothing_beside(tmp_path):
    path = tmp_path / "node.env"
    path.write_text("OLD=1\n")
    path.chmod(0o644)
    write_atomically(str(path), "NEW=1\n")
    assert path.read_text() == "NEW=1\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["node.env"]


def test_a_link_at_the_path_is_refused_and_replaced_by_nothing(tmp_path):
    target = tmp_path / "elsewhere"
    target.write_text("SECRET_OF_SOMEONE=1\n")
    (tmp_path / "node.env").symlink_to(target)
    with pytest.raises(ValueError, match="a symbolic link"):
        read_existing(str(tmp_path / "node.env"))
    assert read_existing(str(tmp_path / "missing.env")) is None
    os.mkdir(tmp_path / "dir.env")
    with pytest.raises(ValueError, match="not a file"):
        read_existing(str(tmp_path / "dir.env"))


@pytest.mark.parametrize(
    "before, after, mode_now, expected",
    [(None, "A=1\n", None, True), ("A=1\n", "A=1\n", 0o600, False), ("A=1\n", "A=2\n", 0o600, True),
     ("A=1\n", "A=1\n", 0o644, True)],
)
def test_when_the_file_is_written(before, after, mode_now, expected):
    assert plan(before, after, mode_now) is expected


@pytest.mark.parametrize(
    "before, after, marked, shown, hidden",
    [
        # a harmless variable added: the diff names it and its value (and the no_log content never stands whole)
        ("A=1\n", "A=1\nPROBE=on\n", [], ["+PROBE=on"], []),
        ("PROBE=off\n", "PROBE=on\n", [], ["-PROBE=off", "+PROBE=on"], []),
        # removed since: its old value is not shown, whatever its name
        ("MY_CONF=hunter2\n", "", [], ["-MY_CONF=****"], ["hunter2"]),
        # marked secret only now: the old value is not shown either
        ("MY_CONF=hunter2\n", "MY_CONF=hunter3\n", ["my_conf"], ["-MY_CONF=****", "+MY_CONF=**** (changed)"],
         ["hunter2", "hunter3"]),
        # a value holding a vertical tab or a form feed is one line (docker's reader splits on \n alone)
        ("", "MY_TOKEN=abc\x0bdef\x0cghi\n", [], ["+MY_TOKEN=****"], ["def", "ghi"]),
        ("", "GITHUB_TOKEN_2=t\nSMTP_PASS=p\nDB_PWD=w\nBASIC_AUTH=a\n", [],
         ["+GITHUB_TOKEN_2=****", "+SMTP_PASS=****", "+DB_PWD=****", "+BASIC_AUTH=****"], ["=t\n", "=p\n", "=w\n", "=a\n"]),
    ],
)
def test_the_diff_shown(before, after, marked, shown, hidden):
    diff = masked_diff("/etc/x/node.env", before, after, marked)
    for line in shown:
        assert line + "\n" in diff, diff
    for text in hidden:
        assert text not in diff, diff
    assert diff != after


def test_a_new_file_is_diffed_from_nothing():
    headers = masked_diff("/etc/x/node.env", None, "A=1\n").splitlines()[:2]
    assert headers == ["--- /dev/null", "+++ /etc/x/node.env (after)"]


def test_another_owner_rewrites_the_file():
    assert plan("A=1\n", "A=1\n", 0o600, 0o600, owner_now=1000, owner=0) is True
    assert plan("A=1\n", "A=1\n", 0o600, 0o600, owner_now=0, owner=0) is False
