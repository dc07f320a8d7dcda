"""How the tests run a command in .venv-jax (a module of its own: test files import it by a
name no other file in tests/ has, unlike `conftest`)."""

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def jax_command(python, backend, *args):
    """subprocess arguments for `python *args` from the repository's root, with Keras on
    `backend` (and JAX on the CPU, its compilations cached)."""
    env = {**os.environ, "KERAS_BACKEND": backend, "PYTHONPATH": str(ROOT)}
    env.update(JAX_PLATFORMS="cpu", TF_CPP_MIN_LOG_LEVEL="3")
    env.update(JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0")
    return dict(args=[python, *args], env=env, cwd=ROOT, text=True)
