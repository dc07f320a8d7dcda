"""`suggest --history FILE` without --user: one query a line or the app's export (query TAB
time), and a file that is not text or not in the format refused with the first bad line."""

import os

import pytest

from mtn_keras.data.history import read_history
from mtn_keras.data.logs import InputError


def test_the_apps_export_and_plain_lines_are_read_as_queries(tmp_path):
    path = tmp_path / "my-queries.txt"
    path.write_text(
        "lisbon hotels\t2006-03-01 07:17:12\n\nlisbon trams\t2006-03-01 07:20:00\nporto\n"
    )
    assert read_history(str(path)) == ["lisbon hotels", "lisbon trams", "porto"]


@pytest.mark.parametrize(
    "content, bad, first",
    [
        (os.urandom(50_000).replace(b"\n", b"x") + b"\n" + b"\xff" * 10, 2, "line 1: not UTF-8"),
        (b"lisbon\x00\x00\x01\nporto\n", 1, "line 1: a NUL byte"),
        (b"7\tlisbon hotels\t2006-03-01 07:17:12\n", 1, "line 1: TAB-separated, but not query"),
        (b"lisbon\nlisbon trams\tyesterday\n", 1, "line 2: TAB-separated"),
    ],
    ids=["binary", "nul", "aol-log-without-user", "bad-time"],
)
def test_a_file_not_text_or_not_in_the_format_is_refused(tmp_path, content, bad, first):
    path = tmp_path / "history.txt"
    path.write_bytes(content)
    with pytest.raises(InputError) as refused:
        read_history(str(path))
    message = str(refused.value)
    assert message.startswith(f"{path}: {bad} of ") and f"the first at {first}" in message
    assert "\n" not in message
