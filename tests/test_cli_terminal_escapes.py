"""No character of a file or model name drives the terminal: every line the command line prints
(tables, notes, warnings, errors, the lines of ``check`` and ``report``) shows control characters
as their escapes, through one function (:func:`metrics_core.terminal.escape`).

The expected escapes are written out by hand (``\\x1b``), never computed with the code under test;
CSV to a file or a pipe stays exact (nothing the user gave is altered), and to a terminal is escaped.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import xml.dom.minidom
from pathlib import Path

import pytest

from metrics_core.cli import main
from metrics_core.terminal import TerminalWriter, escape, write_data

HERE = Path(__file__).resolve().parent
RUN = HERE / "data" / "formats" / "run.csv"
QRELS = HERE / "data" / "formats" / "qrels.csv"
REPO = HERE.parent

#: sets the window title, rings the bell, clears the screen; then a carriage return, a right-to-left
#: override, a next-line C1 control and a lone surrogate (a file name that is not UTF-8)
HOSTILE = "run\x1b]0;pwn\x07\x1b[2J\r\u202e\x85\udce9"
SHOWN = "run\\x1b]0;pwn\\x07\\x1b[2J\\x0d\\u202e\\x85\\xe9"
RAW = ("\x1b", "\x07", "\r", "\u202e", "\x85", "\udce9")


def hostile_run(tmp_path: Path, stem: str = HOSTILE) -> Path:
    path = tmp_path / f"{stem}.csv"
    shutil.copy(RUN, path)
    return path


def cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_escaped(*texts: str) -> None:
    for text in texts:
        assert not [c for c in RAW if c in text], repr(text)


def test_escape_writes_what_a_terminal_obeys_as_text():
    assert escape(HOSTILE) == SHOWN
    assert escape("a\nb\tc") == "a\\x0ab\\x09c"
    assert escape("a\nb\x1b", keep_newlines=True) == "a\nb\\x1b"
    assert escape("\x00\x7f\x9f\u2028\u2066\ufffe") == "\\x00\\x7f\\x9f\\u2028\\u2066\\ufffe"
    assert escape("é ✓ 日本 Ω ' \" \\") == "é ✓ 日本 Ω ' \" \\"  # printable text as it is


def test_evaluate_table_and_warnings(capsys, tmp_path):
    code, out, err = cli(capsys, "evaluate", "--qrels", QRELS, "--run", hostile_run(tmp_path), "--metrics", "ndcg@3")
    assert code == 0
    assert_escaped(out, err)
    assert SHOWN in out.splitlines()[2]  # the model's row of the table
    warnings = [line for line in err.splitlines() if line.startswith("warning: ")]
    assert warnings and all(line.startswith(f"warning: {SHOWN}: ") for line in warnings)


def test_a_file_name_that_is_not_utf8_names_its_model_with_the_bytes_escaped(capsys, tmp_path):
    """Python holds the byte 0xE9 of a Latin-1 file name as the lone surrogate U+DCE9, which no table
    can hold: the model is named with the byte written out, and the file is read."""
    from metrics_core.naming import model_name

    assert model_name(tmp_path / "caf\udce9.csv") == "caf\\xe9" and model_name("x\ud800.csv") == "x\\ud800"
    path = tmp_path / os.fsdecode(b"caf\xe9.csv")
    shutil.copy(RUN, path)
    code, out, err = cli(capsys, "compare", "--qrels", QRELS, "--run", path, "--run", hostile_run(tmp_path),
                         "--metrics", "ndcg@3")
    assert code == 0, err
    assert "caf\\xe9" in out and "Traceback" not in err


def test_compare_table(capsys, tmp_path):
    other = tmp_path / "plain.csv"
    shutil.copy(RUN, other)
    code, out, err = cli(capsys, "compare", "--qrels", QRELS, "--run", hostile_run(tmp_path), "--run", other,
                         "--metrics", "ndcg@3")
    assert code == 0, err
    assert_escaped(out, err)
    assert SHOWN in out


def test_errors_name_the_file_escaped(capsys, tmp_path):
    code, out, err = cli(capsys, "evaluate", "--qrels", QRELS, "--run", tmp_path / f"{HOSTILE}.csv", "--metrics", "ndcg@3")
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("error: ")
    assert_escaped(err)
    assert SHOWN in err and "no such file" in err
    bad = tmp_path / f"{HOSTILE}.csv"
    bad.write_text("user_id,item_id,score\nu1,i1,abc\n")
    code, out, err = cli(capsys, "evaluate", "--qrels", QRELS, "--run", bad, "--metrics", "ndcg@3")
    assert code == 2 and err.count("\n") == 1 and SHOWN in err and "line 2" in err
    assert_escaped(err)


def test_check_lines_and_junit_stay_valid(capsys, tmp_path):
    junit = tmp_path / "junit.xml"
    code, out, err = cli(capsys, "check", "--qrels", QRELS, "--run", hostile_run(tmp_path), "--junit", junit,
                         "ndcg@3 >= 0.99")
    assert code == 1
    assert_escaped(out, err)
    text = junit.read_text(encoding="utf-8")
    doc = xml.dom.minidom.parseString(text.encode("utf-8"))  # well formed: raises otherwise
    (case,) = doc.getElementsByTagName("testcase")
    assert case.getAttribute("classname") == f"metrics-core.check.{SHOWN}"
    assert doc.getElementsByTagName("failure")[0].getAttribute("message").startswith("FAIL ndcg@3 >= 0.99")


def test_report_line_names_the_output_escaped(capsys, tmp_path):
    out_path = tmp_path / "r\x1b[2J.html"
    code, out, err = cli(capsys, "report", "--qrels", QRELS, "--run", hostile_run(tmp_path), "--metrics", "ndcg@3",
                         "--output", out_path)
    assert code == 0, err
    assert_escaped(out, err)
    assert "r\\x1b[2J.html" in err and out_path.exists()


def test_csv_is_exact_to_a_pipe_and_escaped_on_a_terminal(capsys, tmp_path, monkeypatch):
    code, out, _ = cli(capsys, "evaluate", "--qrels", QRELS, "--run", hostile_run(tmp_path, "m\x1b[2J"),
                       "--metrics", "ndcg@3", "--csv")
    assert code == 0 and out.splitlines()[1].startswith("m\x1b[2J,")  # data: exactly the name given

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True
    screen = Terminal()
    monkeypatch.setattr(sys, "stdout", TerminalWriter(screen))
    write_data("model,x\nm\x1b[2J,1\n")
    assert screen.getvalue() == "model,x\nm\\x1b[2J,1\n"


def test_a_real_process_prints_no_control_character(tmp_path):
    """Through the process entry point (no capture layer): the bytes on stdout and stderr."""
    run = hostile_run(tmp_path, "run\x1b]0;pwn\x07\x1b[2J")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-m", "metrics_core", "evaluate", "--qrels", str(QRELS), "--run", str(run),
                           "--metrics", "ndcg@3"], capture_output=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    for stream in (proc.stdout, proc.stderr):
        assert b"\x1b" not in stream and b"\x07" not in stream
    assert b"run\\x1b]0;pwn\\x07\\x1b[2J" in proc.stdout


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
def test_stdout_on_a_full_device_is_one_line(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "metrics_core", "evaluate", "--qrels", str(QRELS), "--run",
                               str(RUN), "--metrics", "ndcg@3"], stdout=full, stderr=subprocess.PIPE, env=env,
                              timeout=300)
    err = proc.stderr.decode()
    lines = [line for line in err.splitlines() if not line.startswith("warning: ")]
    assert proc.returncode == 2 and "Traceback" not in err
    assert lines == [lines[0]] and lines[0].startswith("error: ") and "standard output" in lines[0]
    assert "No space left on device" in lines[0]
