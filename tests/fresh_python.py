"""Code run in a fresh Python process, for what one test process cannot show: which modules a
program imports, a SavedModel loaded with none of the package's code in memory (a module of
its own: test files import it by a name no other file in tests/ has)."""

import json
import subprocess
import sys
from pathlib import Path

from hang_limit import HANG_S

REPO = Path(__file__).resolve().parents[1]


def fresh_python(code, timeout=HANG_S):
    """`python -c code` from the repository's root: its finished process, output as text."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, cwd=REPO
    )


def printed_json(code, timeout=HANG_S):
    """What `code` prints last, read as JSON; the process must succeed."""
    done = fresh_python(code, timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def printed_without_tensorflow(code, timeout=HANG_S):
    """The lines that `code` prints, once it has run, succeeded and imported no TensorFlow."""
    done = fresh_python(code + "import sys\nprint('tensorflow' in sys.modules)\n", timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    *printed, imported = done.stdout.strip().splitlines()
    assert imported == "False", "TensorFlow was imported"
    return printed
