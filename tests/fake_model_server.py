"""Fake model servers for the tests of the clients (the app's RemoteModel, mtn_keras.load of
an address): TensorFlow Serving's REST metadata and predict, answered by a handler in a thread
on 127.0.0.1, no TensorFlow (a module of its own: test files import it by a name no other file
in tests/ has)."""

import json
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def metadata(signatures):
    """A metadata answer listing `signatures` ({name: {"outputs": {...}}})."""
    return {"metadata": {"signature_def": {"signature_def": signatures}}}


class JsonHandler(BaseHTTPRequestHandler):
    """A handler that answers in JSON (or in given bytes) and logs nothing."""

    def answer(self, status, body):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@contextmanager
def serving(handler):
    """The server of `handler` on a free port of 127.0.0.1, in a thread until the block ends
    (or until the test shuts it down itself)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
