"""Run inside the runtime image (no network): print the Ray and vLLM versions it carries as one JSON line.

A package that is missing or fails to import gives an empty version and its error, so docker_runtime
can name it (F11 for Ray, F24 for vLLM). The installed distribution's metadata is read first: importing
vLLM imports torch, seconds on every node.
"""

import importlib
import json
from importlib import metadata

found = {}
for package in ("ray", "vllm"):
    try:
        found[package + "_version"] = metadata.version(package)
    except metadata.PackageNotFoundError:
        try:
            found[package + "_version"] = str(importlib.import_module(package).__version__)
        except Exception as exc:  # noqa: BLE001 - any failure to import is the answer
            found[package + "_version"] = ""
            found[package + "_error"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(found))
