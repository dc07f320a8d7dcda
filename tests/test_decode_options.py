"""The decoding options come from DecodeConfig's fields, written once: parsing nothing gives the
defaults, every field has its option and reads back into the config, an export fixes all but
--k, and a bad value is refused by the parser."""

import argparse
import dataclasses

import pytest

from mtn_keras import cli
from mtn_keras.base.config import FILTERS, DecodeConfig


def parsed(argv, fixed=False):
    parser = argparse.ArgumentParser()
    cli.add_decode_arguments(parser, fixed=fixed)
    return cli.decode_config(parser.parse_args(argv))


def test_nothing_given_is_the_defaults():
    assert parsed([]) == DecodeConfig()


def test_every_option_reads_into_its_field():
    argv = [
        "--k",
        "3",
        "--beam",
        "6",
        "--alpha",
        "0.5",
        "--repeat-last",
        "--no-xla",
        "--exact-stop",
        "--source",
        "beam",
        "--no-filter",
        "unrelated",
        "--no-filter",
        "nonwords",
        "--threshold",
        "0.2",
        "--unrelated-history",
        "0",
        "--unrelated-place",
        "last",
        "--popular",
        "2",
        "--beyond-log",
        "0.01",
        "--explicit",
    ]
    expected = DecodeConfig(
        k=3,
        beam=6,
        alpha=0.5,
        repeat_last=True,
        xla=False,
        exact_stop=True,
        source="beam",
        filters=tuple(f for f in FILTERS if f not in ("unrelated", "nonwords")),
        threshold=0.2,
        unrelated_history=0,
        unrelated_place="last",
        popular=2,
        beyond_log=0.01,
        explicit=True,
    )
    assert parsed(argv) == expected
    changed = {f.name for f in dataclasses.fields(DecodeConfig)}
    assert {n for n in changed if getattr(expected, n) != getattr(DecodeConfig(), n)} == changed


def test_an_export_fixes_every_option_but_k():
    names = {f.name for f in dataclasses.fields(DecodeConfig)}
    assert set(cli.FIXED) == names - {"k"}
    assert cli.FIXED["xla"] == "--no-xla" and cli.FIXED["filters"] == "--no-filter"


def test_the_help_says_what_an_export_fixes():
    parser = argparse.ArgumentParser()
    cli.add_decode_arguments(parser, fixed=True)
    helps = [action.help for action in parser._actions if action.dest in cli.FIXED | {"k": 0}]
    assert len(helps) == len(dataclasses.fields(DecodeConfig))
    assert all(help.endswith(" (fixed at export)") for help in helps)
    assert "(default 1) (fixed at export)" in "".join(helps)  # --unrelated-history's default


@pytest.mark.parametrize(
    "argv", [["--k", "0"], ["--threshold", "1.5"], ["--alpha", "nan"], ["--no-filter", "x"]]
)
def test_a_bad_value_is_refused(argv, capsys):
    with pytest.raises(SystemExit):
        parsed(argv)
    assert "invalid" in capsys.readouterr().err
