"""The controller's heap frozen before each task forks its workers, and the collection's ansible.cfg enabling it."""

from __future__ import annotations

import configparser
import gc
import pathlib

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.callback.gc_freeze import CallbackModule

REPO = pathlib.Path(__file__).resolve().parents[4]


@pytest.fixture()
def unfrozen():
    gc.unfreeze()
    yield
    gc.unfreeze()


@pytest.mark.parametrize("event", ["v2_playbook_on_task_start", "v2_playbook_on_handler_task_start"])
def test_each_task_start_freezes_what_the_controller_holds_then(unfrozen, event):
    start = getattr(CallbackModule(), event)
    args = (None, False) if event == "v2_playbook_on_task_start" else (None,)
    held = [[i] for i in range(100)]  # lists: always tracked by the collector
    assert gc.get_freeze_count() == 0
    start(*args)
    frozen = gc.get_freeze_count()
    assert frozen >= len(held)
    # what is made after the freeze is the collector's as usual, until the next task starts
    later = [[i] for i in range(100)]
    assert gc.get_freeze_count() == frozen
    start(*args)
    assert gc.get_freeze_count() >= frozen + len(later)


def test_the_collections_ansible_cfg_and_molecule_enable_it():
    config = configparser.ConfigParser()
    config.read(REPO / "ansible.cfg")
    assert "inferops.vllm_cluster.gc_freeze" in [c.strip() for c in config["defaults"]["callbacks_enabled"].split(",")]
    molecule = (REPO / ".config" / "molecule" / "config.yml").read_text()
    assert "callbacks_enabled: inferops.vllm_cluster.gc_freeze" in molecule
