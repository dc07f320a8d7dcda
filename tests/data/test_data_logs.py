"""Log readers: AOL and Excite rows, gzip, headers, and bad input counted as file:line."""

import gzip
import os

import pytest

from mtn_keras.data.logs import InputError, Tally, check_inputs, read_log

HEADER = "AnonID\tQuery\tQueryTime\tItemRank\tClickURL"


def aol(user, query, time, rank="", url=""):
    return f"{user}\t{query}\t{time}\t{rank}\t{url}"


def write(path, lines):
    path.write_bytes(
        b"".join((line if isinstance(line, bytes) else line.encode()) + b"\n" for line in lines)
    )
    return str(path)


def test_data_aol_rows_with_header(tmp_path):
    path = write(
        tmp_path / "log.txt", [HEADER, aol(7, "red bikes", "2006-03-01 00:00:10", 1, "example.com")]
    )
    tally = Tally()
    rows = list(read_log(path, "aol", tally))
    assert rows == [("7", "red bikes", 1141171210, path, 2)]
    assert tally.counts["rows_read"] == 1 and tally.counts["header_lines"] == 1


def test_data_aol_without_header_gzip_and_crlf(tmp_path):
    lines = [
        aol(7, "red bikes", "2006-03-01 00:00:10"),
        aol(8, "blue kites", "2006-03-02 10:00:00"),
    ]
    plain = write(tmp_path / "log.txt", lines)
    zipped = str(tmp_path / "log.txt.gz")
    with gzip.open(zipped, "wb") as file:
        file.write("".join(line + "\r\n" for line in lines).encode())
    from_plain = [row[:3] for row in read_log(plain, "aol", Tally())]
    from_gzip = [row[:3] for row in read_log(zipped, "aol", Tally())]
    assert (
        from_plain == from_gzip == [("7", "red bikes", 1141171210), ("8", "blue kites", 1141293600)]
    )


def test_data_malformed_rows_are_counted_with_file_and_line(tmp_path):
    path = write(
        tmp_path / "log.txt",
        [
            aol(1, "red bikes", "2006-03-01 00:00:10"),
            "1\tonly two fields",
            aol(1, "blue kites", "yesterday noon"),
            b"1\tcaf\xe9 menu\t2006-03-01 00:00:20\t\t",
            "",
            aol("", "no user", "2006-03-01 00:00:30"),
            aol(1, "green tents", "2006-03-01 00:00:40"),
        ],
    )
    tally = Tally()
    rows = list(read_log(path, "aol", tally))
    assert [row[1] for row in rows] == ["red bikes", "green tents"]
    assert tally.counts["rows_read"] == 7 and tally.counts["rows_malformed"] == 5
    assert tally.malformed_reasons == {
        "too few fields": 1,
        "unparsable time": 1,
        "not UTF-8": 1,
        "empty line": 1,
        "no user id": 1,
    }
    assert tally.malformed_examples[0] == f"{path}:2: too few fields"
    assert tally.malformed_examples[2] == f"{path}:4: not UTF-8"


def test_data_excite_rows_and_page_throughs(tmp_path):
    path = write(
        tmp_path / "excite.log",
        [
            "u1\t970916001949\tRed Bikes",
            "u1\t970916002000\t",
            "u1\t970916002010\t  ",
            "u2\t9709160020\tkites",
        ],
    )
    tally = Tally()
    rows = list(read_log(path, "excite", tally))
    assert rows == [("u1", "Red Bikes", 874369189, path, 1)]
    assert tally.counts["page_through"] == 2 and tally.counts["rows_malformed"] == 1


def test_data_empty_file_reads_no_rows(tmp_path):
    path = write(tmp_path / "empty.txt", [])
    tally = Tally()
    assert list(read_log(path, "aol", tally)) == [] and tally.counts["rows_read"] == 0


def test_data_unreadable_inputs_raise_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        check_inputs([str(tmp_path / "missing.txt")])
    with pytest.raises(InputError, match="is a directory"):
        check_inputs([str(tmp_path)])
    broken = tmp_path / "broken.gz"
    broken.write_bytes(gzip.compress(b"1\tred bikes\t2006-03-01 00:00:10\n" * 1000)[:60])
    with pytest.raises(InputError, match="cannot read"):
        list(read_log(str(broken), "aol", Tally()))


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_data_unreadable_file_raises_input_error(tmp_path):
    path = write(tmp_path / "secret.txt", [aol(1, "red bikes", "2006-03-01 00:00:10")])
    os.chmod(path, 0)
    with pytest.raises(InputError, match="cannot read"):
        check_inputs([path])


def test_data_progress_bar_goes_to_stderr_only_when_asked(tmp_path, capsys):
    path = write(tmp_path / "log.txt", [aol(1, "red bikes", "2006-03-01 00:00:10")])
    list(read_log(path, "aol", Tally(), progress=True))
    err = capsys.readouterr().err
    assert "log.txt" in err and "100%" in err and err.endswith("\n")
    list(read_log(path, "aol", Tally(), progress=False))
    assert capsys.readouterr().err == ""
