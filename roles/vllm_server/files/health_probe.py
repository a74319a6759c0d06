# One poll of the vLLM server: prints "healthy", "exited <code>" or "waiting <why>".
# Run on the head by the vllm_server role; container state comes first, so a server that died
# while loading ends the wait at once instead of after the full timeout.
import json
import subprocess
import sys
import urllib.request

container, url = sys.argv[1], sys.argv[2]
inspect = subprocess.run(["docker", "inspect", container], capture_output=True, text=True, check=False)
if inspect.returncode != 0:
    print("exited: container missing")
    sys.exit(0)
status = json.loads(inspect.stdout)[0]["State"]
if not status.get("Running"):
    print("exited %s" % status.get("ExitCode"))
    sys.exit(0)
try:
    with urllib.request.urlopen(url, timeout=5) as response:
        print("healthy" if response.status == 200 else "waiting HTTP %s" % response.status)
except Exception as exc:  # connection refused while the model loads
    print("waiting %s" % type(exc).__name__)
