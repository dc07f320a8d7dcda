"""Write examples/tiny-aol.txt: a small search log of made-up users and sessions in the AOL
format, so that every command of the README's walk-through can be tried in minutes.

Why made up: the real AOL log holds real people's queries and stays outside the repository.
The sessions refine one of a few topics step by step ("pizza delivery", then "pizza delivery
near me", ...), and the topics repeat across users, so that a tiny model and the query-log
index learn something from a few hundred rows. Seeded: the same file every time.

Usage: python examples/make_tiny_aol.py [--out examples/tiny-aol.txt] [--users 60] [--seed 0]
"""

import argparse
import datetime
import random

TOPICS = [
    "pizza delivery",
    "cheap flights",
    "used cars",
    "weather forecast",
    "guitar lessons",
    "running shoes",
    "garden tools",
    "cat food",
    "movie times",
    "hotel deals",
    "tax forms",
    "bus schedule",
    "pasta recipes",
    "yoga classes",
    "laptop repair",
]
CITIES = ["springfield", "riverton", "lakeside", "oakdale"]
EDITS = [
    "{t}",
    "{t} near me",
    "{t} in {c}",
    "best {t}",
    "{t} reviews",
    "{t} prices",
    "cheap {t}",
    "{t} online",
    "{t} {c} hours",
]
START = datetime.datetime(2006, 3, 1, 8, 0, 0)


def session_rows(rng, user, clock):
    """The rows of one session of 3 to 5 queries on one topic, a minute or two apart."""
    topic, city = rng.choice(TOPICS), rng.choice(CITIES)
    rows = []
    for edit in ["{t}", *rng.sample(EDITS[1:], rng.randint(2, 4))]:
        clock += datetime.timedelta(seconds=rng.randint(20, 150))
        clicked = rng.random() < 0.4  # a click has its rank and a made-up address
        rank, url = (str(rng.randint(1, 10)), "http://www.example.com") if clicked else ("", "")
        rows.append(
            [str(user), edit.format(t=topic, c=city), f"{clock:%Y-%m-%d %H:%M:%S}", rank, url]
        )
    return rows, clock


def tiny_log(users=60, seed=0):
    """The log's lines, header first: every user has 2 to 4 sessions, hours apart."""
    rng = random.Random(seed)
    lines = ["AnonID\tQuery\tQueryTime\tItemRank\tClickURL"]
    for user in range(1000, 1000 + users):
        clock = START + datetime.timedelta(hours=rng.randint(0, 24 * 30))
        for _ in range(rng.randint(2, 4)):
            rows, clock = session_rows(rng, user, clock)
            lines += ["\t".join(row) for row in rows]
            clock += datetime.timedelta(hours=rng.randint(2, 48))
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="examples/tiny-aol.txt")
    parser.add_argument("--users", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    lines = tiny_log(args.users, args.seed)
    with open(args.out, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print(f"{args.out}: {len(lines) - 1} rows of {args.users} made-up users")


if __name__ == "__main__":
    main()
