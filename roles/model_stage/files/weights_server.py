"""The head's throwaway server for staging weights: serves one snapshot folder read-only over HTTP, bound to the
head's interconnect address only (nothing listens on management), with byte ranges so an interrupted copy resumes.
Arguments: address, port, folder, idle seconds. It exits once no request came for that long, so nothing stays
listening after the copy. Prints one line when it listens."""
import functools
import http.server
import os
import sys
import threading
import time


class SnapshotHandler(http.server.SimpleHTTPRequestHandler):
    last_request = [time.monotonic()]

    def log_message(self, *args):
        pass

    def list_directory(self, path):
        self.send_error(403, "no listing")

    def send_head(self):
        SnapshotHandler.last_request[0] = time.monotonic()
        wanted = self.headers.get("Range", "")
        if not wanted.startswith("bytes="):
            return super().send_head()
        path = self.translate_path(self.path)
        if not os.path.isfile(path):
            self.send_error(404)
            return None
        handle = open(path, "rb")  # closed by the base class after copying
        size = handle.seek(0, 2)
        start = min(int(wanted[6:].split("-")[0] or 0), size)
        handle.seek(start)
        self.send_response(206)
        self.send_header("Content-Length", str(size - start))
        self.send_header("Content-Range", f"bytes {start}-{max(size - 1, start)}/{size}")
        self.end_headers()
        return handle


def main():
    address, port, folder, idle = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
    handler = functools.partial(SnapshotHandler, directory=folder)
    try:
        server = http.server.ThreadingHTTPServer((address, port), handler)
    except OSError as exc:
        sys.exit(f"could not listen on {address}:{port}: {exc}")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"serving {folder} on {address}:{port}", flush=True)
    while time.monotonic() - SnapshotHandler.last_request[0] < idle:
        time.sleep(0.5)
    server.shutdown()


main()
