"""Watches one node's copy for up to N seconds: prints `finished` once Ansible's async job has ended (its results
file holds the module's outcome), else one line of progress from the copy's progress file.
Arguments: async results file, progress file, seconds."""
import json
import sys
import time


def read(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return {}


def main():
    results, progress, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    deadline = time.monotonic() + seconds
    while True:
        job = read(results)
        if job and not (job.get("started") and not job.get("finished")):
            print("finished")
            return
        if time.monotonic() >= deadline:
            break
        time.sleep(min(1.0, seconds))
    state = read(progress)
    total, done = int(state.get("total") or 0), int(state.get("bytes") or 0)
    rate = done / max(time.time() - float(state.get("wall") or time.time()), 0.001) if state.get("wall") else 0
    print(f"copying: {done / 1e6:.1f} of {total / 1e6:.1f} MB ({100 * done / max(total, 1):.0f}%), "
          f"{state.get('done', 0)} of {state.get('files', 0)} files done, {rate / 1e6:.1f} MB/s, now {state.get('current') or '-'}")


main()
