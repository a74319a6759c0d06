"""The controller's heap frozen before each task forks its workers, and the collection's ansible.cfg enabling it."""

from __future__ import annotations

import configparser
import gc
import pathlib
import weakref

import pytest
import yaml

from ansible_collections.inferops.vllm_cluster.plugins.callback.gc_freeze import CallbackModule

REPO = pathlib.Path(__file__).resolve().parents[4]


@pytest.fixture()
def unfrozen():
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_each_fork_is_preceded_by_a_freeze_of_what_the_controller_holds_then(unfrozen):
    callback = CallbackModule()
    held = [[i] for i in range(100)]  # lists: always tracked by the collector
    assert gc.get_freeze_count() == 0
    callback.v2_runner_on_start(None, None)
    frozen = gc.get_freeze_count()
    assert frozen >= len(held)
    # what is made after the freeze is the collector's as usual, until the next worker is forked
    later = [[i] for i in range(100)]
    assert gc.get_freeze_count() == frozen
    callback.v2_runner_on_start(None, None)
    assert gc.get_freeze_count() >= frozen + len(later)


def _garbage_in_a_cycle():
    """An object only a reference cycle holds, with a weak reference telling whether the collector freed it."""
    marker = type("Marker", (), {})()
    marker.self = marker
    return weakref.ref(marker)


def test_a_play_start_frees_the_garbage_the_freezes_kept_once_it_doubled(unfrozen):
    callback = CallbackModule()
    callback.collect_above = 0
    callback.v2_runner_on_start(None, None)
    gone = _garbage_in_a_cycle()
    callback.v2_runner_on_start(None, None)
    gc.collect()
    assert gone() is not None, "frozen: the collector leaves it"
    callback.v2_playbook_on_play_start(None)
    assert gone() is None, "a play start collects what the freezes kept"
    kept = gc.get_freeze_count()
    assert kept > 0, "and freezes again"
    # the next play start, with what is frozen not doubled since: no walk of the heap, the garbage stays
    again = _garbage_in_a_cycle()
    callback.v2_runner_on_start(None, None)
    assert gc.get_freeze_count() <= 2 * kept
    callback.v2_playbook_on_play_start(None)
    assert again() is not None, "a play start below twice the last collection's heap collects nothing"


def test_a_play_start_below_the_floor_collects_nothing(unfrozen):
    callback = CallbackModule()
    callback.v2_runner_on_start(None, None)
    # the floor as this process sees it (what pytest holds depends on the tests run before): above what is frozen
    callback.collect_above = gc.get_freeze_count() + 10_000
    gone = _garbage_in_a_cycle()
    callback.v2_runner_on_start(None, None)
    callback.v2_playbook_on_play_start(None)
    assert gone() is not None, "a heap below the floor is not walked at a play start"


def test_the_floor_is_above_what_site_yml_freezes():
    # measured on the lab: a no-op site.yml's controller holds ~140,000 frozen objects at its end
    assert CallbackModule.collect_above >= 200_000


def test_ansible_loads_it_with_both_events():
    from ansible.plugins.loader import callback_loader

    plugin = callback_loader.get("inferops.vllm_cluster.gc_freeze")
    assert plugin is not None
    plugin._init_callback_methods()  # pylint: disable=protected-access
    assert {"v2_runner_on_start", "v2_playbook_on_play_start"} <= plugin._implemented_callback_methods  # pylint: disable=protected-access


def test_the_collections_ansible_cfg_and_molecule_enable_it():
    config = configparser.ConfigParser()
    config.read(REPO / "ansible.cfg")
    assert "inferops.vllm_cluster.gc_freeze" in [c.strip() for c in config["defaults"]["callbacks_enabled"].split(",")]
    molecule = yaml.safe_load((REPO / ".config" / "molecule" / "config.yml").read_text())
    assert molecule["provisioner"]["config_options"]["defaults"]["callbacks_enabled"] == "inferops.vllm_cluster.gc_freeze"
