"""How long a test waits for a served model to load: seconds alone, but over 300 s on a
machine short of memory beside another run of the suite. Only a server that never loads
should fail a test."""

import time

SERVER_START_S = 900


def wait_until_loaded(server, loaded, starting=OSError, pause=0.5):
    """Ask `loaded()` every `pause` s, while `server` (its Popen, stderr piped) runs, until it
    says yes; what it raises of `starting` means the process is starting. Fails with the
    server's last words when it exits, or when SERVER_START_S pass first."""
    until = time.monotonic() + SERVER_START_S
    while True:
        assert server.poll() is None, server.stderr.read()[-2000:]
        assert time.monotonic() < until, f"the server did not answer within {SERVER_START_S} s"
        try:
            if loaded():
                return
        except starting:
            pass
        time.sleep(pause)
