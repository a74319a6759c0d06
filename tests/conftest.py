"""Make inferops.vllm_cluster importable as a collection, the way ansible-core loads it."""

from __future__ import annotations

import pathlib

from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder

REPO = pathlib.Path(__file__).resolve().parents[1]
# `make setup` links the checkout at .ansible/collections/ansible_collections/inferops/vllm_cluster.
_AnsibleCollectionFinder(paths=[str(REPO / ".ansible" / "collections")])._install()
