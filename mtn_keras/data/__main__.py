"""`python -m mtn_keras.data`: the `prepare` command (mtn_keras/prepare.py), under the name of
the package whose datasets it writes."""

from mtn_keras.cli import run
from mtn_keras.prepare import main

if __name__ == "__main__":
    run(main, "prepare")
