"""The made-up search log of the suite's tiny models, in the AOL format: users' sessions that
reformulate one topic step by step (a module of its own: the conftest files and the tests
import it by a name no other file in tests/ has)."""

import datetime
import random

from script_module import load_script

# The example log's first ten topics (examples/make_tiny_aol.py), in the order the suite's
# seeded draws were made with: another order would change every tiny model's data.
TOPICS = [
    load_script("examples/make_tiny_aol.py").TOPICS[i] for i in (1, 9, 2, 0, 3, 4, 5, 6, 7, 8)
]

EDITS = ["{q}", "{q} online", "best {q}", "{q} reviews", "{q} near me", "{q} prices"]


def write_made_up_log(path, users=60, seed=0):
    """An AOL-format log of made-up sessions that reformulate one topic step by step."""
    rng = random.Random(seed)
    lines = ["AnonID\tQuery\tQueryTime\tItemRank\tClickURL"]
    for user in range(users):
        clock = 1_141_200_000 + user * 86_400
        for _ in range(6):
            topic = rng.choice(TOPICS)
            edits = rng.sample(EDITS, rng.randint(3, 5))
            for edit in edits:
                clock += 60
                stamp = _stamp(clock)
                lines.append(f"{user}\t{edit.format(q=topic)}\t{stamp}\t\t")
            clock += 7_200
    path.write_text("\n".join(lines) + "\n")
    return path


def _stamp(seconds):
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S")
