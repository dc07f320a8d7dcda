"""`python -m mtn_keras.ranking`: the same command as `python -m mtn_keras.rank`, under the
name of the folder it builds (the command lives at the package root with the others)."""

from mtn_keras.cli import run
from mtn_keras.rank import main

if __name__ == "__main__":
    run(main, "ranking")
