"""Every malformed input through the command line: exit status 2 and one line on stderr.

Each validation case has a file in tests/data/bad/ (or an option
value); the message must name the file and the line, column or value.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from metrics_core.cli import main

HERE = Path(__file__).resolve().parent
BAD = HERE / "data" / "bad"
GOOD_RUN = HERE / "data" / "formats" / "run.csv"
GOOD_QRELS = HERE / "data" / "formats" / "qrels.csv"


def cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_error(code: int, out: str, err: str, *fragments: str) -> None:
    assert code == 2
    assert out == ""
    assert err.startswith("error: ") and err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


RUN_CASES = {
    "empty.csv": ["the file is empty"],
    "blank.csv": ["the file is empty"],
    "header_only.csv": ["header line but no data rows"],
    "missing_column.csv": ["required item column missing", "columns found: 'user_id', 'offer', 'score'"],
    "ambiguous_columns.csv": ["could all be the user column"],
    "score_non_numeric.csv": ["line 3", "non-numeric value 'abc'", "2 bad score value(s)"],
    "score_empty.csv": ["line 4", "an empty value"],
    "score_nan.csv": ["line 3", "NaN value", "2 bad score value(s)"],
    "score_inf.csv": ["line 2", "infinite value"],
    "duplicate_run.csv": ["line 4", "duplicate (user_id, item_id) = ('u1', 'i01')", "first seen on line 2"],
    "wrong_fields.trec": ["line 3", "expected 6 fields", "found 5"],
    "wrong_fields.csv": ["line 3", "expected 3 fields", "found 4"],
    "binary.csv": ["binary content", "line 2"],
    "latin1.csv": ["line 3", "not valid UTF-8", "byte offset 36"],
    "utf16.csv": ["UTF-16"],
    "workbook.xlsx": ["unsupported format", "supported formats: CSV (.csv), TSV (.tsv), Parquet"],
    "zip_renamed.csv": ["unsupported format", "supported formats"],
    "json_array.json": ["JSON array"],
    "bad_syntax.jsonl": ["line 3", "invalid JSON lines"],
    "corrupt.csv.gz": ["corrupt or truncated gzip"],
    "empty_id.csv": ["line 3", "empty user_id"],
    "a_directory": ["is a directory"],
    "no_such_file.csv": ["no such file"],
    "logloss_scores.csv": ["line 3", "logloss needs probabilities in [0, 1]", "holds 1.7", "2 score(s)"],
    "disjoint_users.csv": ["no user in common"],
}

QRELS_CASES = {
    "relevance_text.csv": ["line 3", "non-numeric value 'yes'"],
    "relevance_nan.tsv": ["line 3", "NaN value"],
    "conflicting_qrels.csv": ["line 5", "conflicting relevance", "on line 4"],
    "wrong_fields.qrels": ["line 2", "expected 4 fields (qid iter docno rel) but found 3"],
}


@pytest.mark.parametrize("name", sorted(RUN_CASES))
def test_bad_run(capsys, name):
    metrics = "ndcg@3,logloss" if name == "logloss_scores.csv" else "ndcg@3"
    code, out, err = cli(capsys, "evaluate", "--qrels", GOOD_QRELS, "--run", BAD / name, "--metrics", metrics)
    assert_error(code, out, err, f"error: {BAD / name}: ", *RUN_CASES[name])


@pytest.mark.parametrize("name", sorted(QRELS_CASES))
def test_bad_qrels(capsys, name):
    code, out, err = cli(capsys, "evaluate", "--qrels", BAD / name, "--run", GOOD_RUN, "--metrics", "ndcg@3")
    assert_error(code, out, err, f"error: {BAD / name}: ", *QRELS_CASES[name])


def test_corpus_is_fully_used():
    on_disk = {p.name for p in BAD.iterdir()}
    assert on_disk == (set(RUN_CASES) | set(QRELS_CASES)) - {"no_such_file.csv"}


@pytest.mark.parametrize("metric,fragments", [
    ("ndcg@10,ndgc@10", ["unknown metric 'ndgc@10'", "did you mean 'ndcg'"]),
    ("precison@5", ["unknown metric 'precison@5'", "did you mean 'precision'"]),
    ("ndcg@0", ["k must be a whole number >= 1", "ndcg@0"]),
    ("map@-3", ["k must be a whole number >= 1", "map@-3"]),
])
def test_bad_metric_names(capsys, metric, fragments):
    code, out, err = cli(capsys, "evaluate", "--qrels", GOOD_QRELS, "--run", GOOD_RUN, "--metrics", metric)
    assert_error(code, out, err, *fragments)


def test_metric_names_are_checked_before_reading_files(capsys):
    code, out, err = cli(capsys, "evaluate", "--qrels", BAD / "empty.csv", "--run", GOOD_RUN, "--metrics", "bogus@3")
    assert_error(code, out, err, "unknown metric 'bogus@3'")


def test_no_qrels_and_no_relevance_column(capsys):
    code, out, err = cli(capsys, "evaluate", "--run", GOOD_RUN, "--metrics", "ndcg@3")
    assert_error(code, out, err, f"{GOOD_RUN}: no --qrels given and the run has no relevance column", "--qrels FILE")


def test_unknown_per_user_extension(capsys, tmp_path):
    code, out, err = cli(capsys, "evaluate", "--qrels", GOOD_QRELS, "--run", GOOD_RUN, "--metrics", "ndcg@3",
                         "--per-user", tmp_path / "x.xlsx")
    assert_error(code, out, err, "x.xlsx: unknown output extension '.xlsx'")


def test_explicit_mapping_option(capsys):
    code, out, err = cli(capsys, "evaluate", "--qrels", GOOD_QRELS, "--run", GOOD_RUN, "--metrics", "ndcg@3",
                         "--run-columns", "user_id=customer")
    assert_error(code, out, err, "column 'customer' given for user_id is not in the file")


def test_usage_errors_exit_2(capsys):
    assert main(["evaluate", "--qrels", str(GOOD_QRELS), "--metrics", "ndcg@3"]) == 2  # --run missing
    assert "required: --run" in capsys.readouterr().err
    assert main(["evaluate", "--run", str(GOOD_RUN), "--metrics", "ndcg@3", "--json", "--csv"]) == 2
    assert "not allowed with argument" in capsys.readouterr().err
    assert main([]) == 2
    assert "usage:" in capsys.readouterr().err
