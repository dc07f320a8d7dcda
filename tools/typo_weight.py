"""How far below a candidate that completes what was typed a corrected one stands
(typos.FIXED_WEIGHT), measured on validation users: `evaluate --prefix 5,8 --typos --history`
of a run folder once per weight, on the same pairs, each case's SR@5 with and without the
history, clean and with one slip. How the weight was chosen (docs/quality.md).

Usage: python -m tools.typo_weight --model runs/default --input data/aol-valid-users.txt
           --train-data data/aol-90 [--weights 0.1,0.3,1] [--prefix 5,8] [--every 3]
"""

import argparse
import io
import json
import os
import tempfile
from contextlib import redirect_stdout


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="runs/default", help="a ranked run folder")
    parser.add_argument("--input", required=True, help="the validation users' log rows")
    parser.add_argument("--train-data", default="data/aol-90", help="the prepared dataset")
    parser.add_argument("--weights", default="0.1,0.3,1", help="the weights to compare")
    parser.add_argument("--prefix", default="5,8", help="the typed characters")
    parser.add_argument("--every", default="3", help="score every Nth pair (evaluate --every)")
    args = parser.parse_args(argv)
    from mtn_keras import evaluate
    from mtn_keras.ranking import hybrid

    print("| weight | typed | model | model + history | fuzzy MPC |")
    print("| ---: | --- | ---: | ---: | ---: |")
    for weight in (float(w) for w in args.weights.split(",")):
        hybrid.FIXED_WEIGHT = weight
        with tempfile.TemporaryDirectory() as folder:
            report_path = os.path.join(folder, "report.json")
            with redirect_stdout(io.StringIO()):
                evaluate.main(
                    ["--model", args.model, "--input", args.input, "--protocol", "paper",
                     "--history", "--prefix", args.prefix, "--typos", "--bootstrap", "0",
                     "--every", args.every,
                     "--train-data", args.train_data, "--json", report_path]
                )  # fmt: skip
            with open(report_path) as handle:
                report = json.load(handle)
        for case, rows in report.items():
            if case == "bootstrap" or case.startswith("first"):
                continue
            model = next(name for name in rows if name.endswith(" + history"))[: -len(" + history")]
            cells = [rows[model]["sr@5"], rows[f"{model} + history"]["sr@5"]]
            cells.append(rows["fuzzy MPC"]["sr@5"])
            print(f"| {weight:g} | {case} | " + " | ".join(f"{c:.2f}" for c in cells) + " |")


if __name__ == "__main__":
    main()
