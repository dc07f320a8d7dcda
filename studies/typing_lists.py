"""What a model's lists show while typing, judged against what was typed: on the test users'
pairs (studies/safety_lists.py's replay), the first 5 characters of the next query typed after
the session, without and with the user's history and in an empty session, the items that do
not start with what was typed (and of them, those that correct a word known nowhere: not
English by wordfreq, not the log's, the session's or the history's), the items that end on a
function word (ranking/fragments.py) and those that only repeat the typed letters, with
SR@5 (the next query listed): with the session against an empty one says how far the session
steers completion. Counts.

Run: python -m studies.typing_lists --model default --input aol-test-users.txt \
    --log-words runs/default/ranking/words.txt --every 8
"""

from collections import Counter

import mtn_keras
from mtn_keras.data.text import completes, normalise
from mtn_keras.ranking.fragments import FUNCTION_WORDS
from mtn_keras.serving.word_starts import english_words
from studies.safety_lists import TYPED, batched, pairs_of, replay_parser


def known_nowhere(typed, known, own):
    """Whether a word of `typed` is known nowhere: a finished one neither in `known` nor
    `own`; the open last one the start of none of them (fewer than 3 letters: known)."""
    words, open_last = typed.split(), not typed.endswith(" ")
    for i, word in enumerate(words):
        if len(word) < 3:
            continue
        if i == len(words) - 1 and open_last:
            if not any(k.startswith(word) for k in known | own):
                return True
        elif word not in known and word not in own:
            return True
    return False


def counts_of(model, pairs, known, kind):
    """Counter of the items of one list kind over the pairs."""
    counts = Counter()
    typed = [t[:TYPED] for _, t, _ in pairs]
    sessions = [[] if kind == "empty session" else c for c, _, _ in pairs]
    histories = [h for _, _, h in pairs] if kind == "with history" else None
    answers = batched(
        lambda s, e: model.complete(sessions[s:e], typed[s:e], histories and histories[s:e]),
        len(pairs),
    )
    for (_, target, _), session, history, prefix, answer in zip(
        pairs, sessions, histories or [None] * len(pairs), typed, answers
    ):
        finished = normalise(prefix + "x").endswith(" x")  # the last word ends
        chars = normalise(prefix) + (" " if finished and normalise(prefix) else "")
        counts["found"] += normalise(target) in {normalise(i.text) for i in answer}
        own = {w for q in [*session, *(history or [])] for w in q.split()}
        for item in answer:
            text = normalise(item.text)
            counts["items"] += 1
            if not completes(text, chars):
                counts["not as typed"] += 1
                counts["of a word known nowhere"] += known_nowhere(chars, known, own)
            counts["ends on a function word"] += text.split()[-1] in FUNCTION_WORDS
            counts["only the typed letters"] += text == chars.strip()
    return counts


def main(argv=None):
    parser = replay_parser(__doc__, "--log-words", "the ranking's words.txt")
    args = parser.parse_args(argv)
    with open(args.log_words, encoding="utf-8") as handle:
        known = set(english_words()) | {line.strip() for line in handle}
    pairs = pairs_of(args.input, args.every)
    model = mtn_keras.load(args.model)
    names = ("not as typed", "of a word known nowhere", "ends on a function word")
    print(f"{len(pairs):,} pairs (every {args.every}), {TYPED} characters typed")
    print("| list | SR@5 | items | " + " | ".join(names) + " | only the typed letters |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for kind in ("session", "with history", "empty session"):
        counts = counts_of(model, pairs, known, kind)
        row = [counts[k] for k in ("items", *names, "only the typed letters")]
        found = f"{100 * counts['found'] / len(pairs):.2f}"
        print(f"| {kind} | {found} | " + " | ".join(f"{n:,}" for n in row) + " |")


if __name__ == "__main__":
    main()
