"""A made-up log of made-up words, for the WordPiece model of the serving tests."""

import datetime
import random

SYLLABLES = ["ka", "lo", "mi", "ra", "to", "ne", "su", "vi"]
EDITS = ["{q}", "{q} online", "best {q}", "{q} reviews", "{q} near me", "{q} prices"]


def made_up_word(rng):
    """A made-up word of 2 or 3 syllables: hundreds of them, each one rare."""
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3)))


def write_syllable_log(path, users=60, seed=0):
    """An AOL-format log whose sessions reformulate a made-up word: a model that predicts
    the next query must copy that word, whose pieces a WordPiece vocabulary holds."""
    rng = random.Random(seed)
    lines = ["AnonID\tQuery\tQueryTime\tItemRank\tClickURL"]
    clock = datetime.datetime(2006, 3, 1, tzinfo=datetime.UTC)
    for user in range(users):
        for _ in range(6):
            topic = made_up_word(rng)
            for edit in rng.sample(EDITS, rng.randint(3, 5)):
                clock += datetime.timedelta(minutes=1)
                lines.append(f"{user}\t{edit.format(q=topic)}\t{clock:%Y-%m-%d %H:%M:%S}\t\t")
            clock += datetime.timedelta(hours=2)
    path.write_text("\n".join(lines) + "\n")
    return path
