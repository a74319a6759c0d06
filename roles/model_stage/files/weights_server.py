"""The head's throwaway server for staging weights: serves one snapshot folder read-only over HTTP, bound to the
head's interconnect address only (nothing listens on management), with byte ranges so an interrupted copy resumes.
Arguments: address, port, folder, idle seconds, startup seconds. It exits once no request is in flight and none
came for `idle` seconds (or none at all within `startup` seconds), so nothing stays listening after the copy.
Prints one line when it listens."""
import functools
import http.server
import os
import sys
import threading
import time


class Activity:
    """Requests in flight and when the last one ended: a long file keeps the server up while it streams."""
    lock = threading.Lock()
    in_flight = 0
    last = None

    @classmethod
    def begin(cls):
        with cls.lock:
            cls.in_flight += 1

    @classmethod
    def end(cls):
        with cls.lock:
            cls.in_flight -= 1
            cls.last = time.monotonic()


class SnapshotHandler(http.server.SimpleHTTPRequestHandler):

    def log_message(self, *args):
        pass

    def list_directory(self, path):
        self.send_error(403, "no listing")

    def handle_one_request(self):
        Activity.begin()
        try:
            super().handle_one_request()
        finally:
            Activity.end()

    def send_head(self):
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
    address, port, folder = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    idle, startup = float(sys.argv[4]), float(sys.argv[5]) if len(sys.argv) > 5 else 120.0
    handler = functools.partial(SnapshotHandler, directory=folder)
    try:
        server = http.server.ThreadingHTTPServer((address, port), handler)
    except OSError as exc:
        sys.exit(f"could not listen on {address}:{port}: {exc}")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"serving {folder} on {address}:{port}", flush=True)
    began = time.monotonic()
    while True:
        time.sleep(0.5)
        with Activity.lock:
            quiet = Activity.in_flight == 0
            since = time.monotonic() - (Activity.last if Activity.last is not None else began)
            limit = idle if Activity.last is not None else startup
        if quiet and since >= limit:
            break
    server.shutdown()


main()
