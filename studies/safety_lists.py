"""What a model shows the test users, judged for safety by the words and by the log's clicks:
each (session, next query) pair of the paper protocol replayed in time order, the lists with
nothing typed and with the next query's first 5 characters typed, without and with the user's
earlier sessions as history, and typed into an empty session too. An item is counted explicit
by the word rule (mtn_keras/data/safety.py) or by the evidence of the whole --judge-log
(data/evidence.py: its clicks, every user's, and the name of every adult site they reached,
typed or not: a stricter judge than the export's), and child-unsafe by either. Counts only.

Run: python -m studies.safety_lists --model default --input aol-test-users.txt \
    --judge-log ../shared/data/aol/aol-top1000-dev.txt.gz --every 2
"""

import argparse
from collections import Counter

import mtn_keras
from mtn_keras.data.evidence import Evidence, names_site, tally_clicks
from mtn_keras.data.history import PairHistories
from mtn_keras.data.pairs import pair_histories, session_pairs
from mtn_keras.data.replay import replay_logs
from mtn_keras.data.safety import explicit
from mtn_keras.data.sessions import Protocol
from mtn_keras.data.text import normalise

TYPED = 5
BATCH = 64


def judge(path):
    """The evidence of the log at `path`, every adult site's name its clicks reached counted
    (Evidence.of_logs counts those people type)."""
    tally = tally_clicks([path], "aol")
    names = {host.rsplit(".", 1)[0] for host in tally.adult_hosts}
    sites = {n for n in names if "." not in n and names_site(n, tally.adult_hosts)}
    return Evidence(dict.fromkeys(tally.explicit(), "clicks"), frozenset(sites))


def pairs_of(path, every):
    """(context, next query, the user's earlier queries) of every `every`-th pair."""
    view, by_user = replay_logs([path], "aol", Protocol.named("paper"), history=True)
    earlier = PairHistories(by_user, view.users, view.starts)
    histories = pair_histories(view.lines, earlier)
    found = [
        (context, target, history)
        for (context, target), history in zip(session_pairs(view.lines), histories)
    ]
    return found[::every]


def kinds(model, pairs):
    """{list kind: [lists of texts]} for the pairs."""
    lists = {}
    contexts = [c for c, _, _ in pairs]
    typed = [t[:TYPED] for _, t, _ in pairs]
    histories = [h for _, _, h in pairs]
    calls = {
        "suggest": lambda s, e: model.suggest(contexts[s:e]),
        "suggest with history": lambda s, e: model.suggest(contexts[s:e], histories[s:e]),
        "complete 5": lambda s, e: model.complete(contexts[s:e], typed[s:e]),
        "complete 5 with history": lambda s, e: model.complete(
            contexts[s:e], typed[s:e], histories[s:e]
        ),
        "complete 5, empty session": lambda s, e: model.complete([[]] * (e - s), typed[s:e]),
    }
    for name, call in calls.items():
        lists[name] = [[s.text for s in answer] for answer in batched(call, len(pairs))]
    return lists


def batched(call, count):
    """The answers of `call(start, end)` for `count` pairs, BATCH at a time."""
    for start in range(0, count, BATCH):
        yield from call(start, min(start + BATCH, count))


def replay_parser(doc, option, what):
    """The options of a study that replays the test users' pairs: --model, --input, --every,
    and its own required `option` (help: `what`)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--input", required=True, help="the test users' rows, AOL format")
    parser.add_argument(option, required=True, help=what)
    parser.add_argument("--every", type=int, default=1)
    return parser


def main(argv=None):
    parser = replay_parser(__doc__, "--judge-log", "the log whose clicks judge")
    args = parser.parse_args(argv)
    evidence = judge(args.judge_log)
    pairs = pairs_of(args.input, args.every)
    print(f"{len(pairs):,} pairs (every {args.every}); the judge: {args.judge_log}'s clicks")
    print("| list | items | explicit by words | explicit by clicks | child-unsafe |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, lists in kinds(mtn_keras.load(args.model), pairs).items():
        counts = Counter()
        for text in (normalise(t) for texts in lists for t in texts):
            counts["items"] += 1
            counts["words"] += explicit(text)
            counts["clicks"] += evidence.marks(text)
            counts["child"] += evidence.child_unsafe(text)
        row = [counts[k] for k in ("items", "words", "clicks", "child")]
        print(f"| {name} | " + " | ".join(f"{n:,}" for n in row) + " |")


if __name__ == "__main__":
    main()
