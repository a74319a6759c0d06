"""Run inside the runtime image (no network, no GPU): print the Ray and vLLM versions it carries as one JSON line.

The version is what the package reports when imported (`ray.__version__`), as the containers will see it; the
distribution's metadata where a package has no __version__. Ray must import (F11: the containers run `ray
start`); vLLM may fail to import here for want of a GPU, so its installed distribution answers then (F24).
A package that answers neither way gives an empty version and its error.
"""

import importlib
import json
from importlib import metadata

# package -> whether its distribution's metadata may answer when the import fails
PACKAGES = {"ray": False, "vllm": True}


def installed(package):
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return ""


found = {}
for package, metadata_may_answer in PACKAGES.items():
    try:
        module = importlib.import_module(package)
    except Exception as exc:  # noqa: BLE001 - any failure to import is the answer
        version = installed(package) if metadata_may_answer else ""
        found[package + "_version"] = version
        if not version:
            found[package + "_error"] = f"{type(exc).__name__}: {exc}"
        continue
    found[package + "_version"] = str(getattr(module, "__version__", "") or installed(package))
print(json.dumps(found))
