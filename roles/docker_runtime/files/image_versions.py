"""Run inside the runtime image (no network): print the Ray and vLLM versions it carries as one JSON line.

The version is what the package reports when imported (`ray.__version__`), as the containers will see it;
the distribution's metadata only where a package has no __version__. A package that is missing or fails to
import gives an empty version and its error, so docker_runtime can name it (F11 for Ray, F24 for vLLM).
"""

import importlib
import json
from importlib import metadata

found = {}
for package in ("ray", "vllm"):
    try:
        module = importlib.import_module(package)
    except Exception as exc:  # noqa: BLE001 - any failure to import is the answer
        found[package + "_version"] = ""
        found[package + "_error"] = f"{type(exc).__name__}: {exc}"
        continue
    version = getattr(module, "__version__", "")
    if not version:
        try:
            version = metadata.version(package)
        except metadata.PackageNotFoundError:
            version = ""
    found[package + "_version"] = str(version)
print(json.dumps(found))
