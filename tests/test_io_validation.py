"""Every malformed input gives one MetricsError naming the file and the line/column/value."""

from __future__ import annotations

from pathlib import Path

import pytest

from metrics_core.errors import MetricsError
from metrics_core.io import read_qrels, read_run, read_table

BAD = Path(__file__).resolve().parent / "data" / "bad"

# file, kind, fragments every message must contain
CASES = [
    ("empty.csv", "run", ["empty.csv", "the file is empty"]),
    ("blank.csv", "run", ["blank.csv", "the file is empty"]),
    ("header_only.csv", "run", ["header_only.csv", "header line but no data rows"]),
    ("missing_column.csv", "run", ["required item column missing", "columns found: 'user_id', 'offer', 'score'"]),
    ("ambiguous_columns.csv", "run", ["'user', 'uid' could all be the user column"]),
    ("score_non_numeric.csv", "run", ["line 3", "non-numeric value 'abc'", "2 bad score value(s)"]),
    ("score_empty.csv", "run", ["line 4", "score column 'score' has an empty value", "1 bad score"]),
    ("score_nan.csv", "run", ["line 3", "NaN value 'NaN'", "2 bad score value(s) (2 NaN)"]),
    ("score_inf.csv", "run", ["line 2", "infinite value 'inf'"]),
    ("relevance_text.csv", "qrels", ["line 3", "relevance column 'relevance' has non-numeric value 'yes'"]),
    ("relevance_nan.tsv", "qrels", ["line 3", "NaN value"]),
    ("duplicate_run.csv", "run", ["line 4", "('u1', 'i01')", "first seen on line 2", "2 duplicate row(s)"]),
    ("conflicting_qrels.csv", "qrels", ["line 5", "conflicting relevance", "2 here but 0 on line 4"]),
    ("wrong_fields.trec", "run", ["line 3", "expected 6 fields (qid Q0 docno rank score tag) but found 5", "1 line(s)"]),
    ("wrong_fields.qrels", "qrels", ["line 2", "expected 4 fields (qid iter docno rel) but found 3"]),
    ("wrong_fields.csv", "run", ["line 3", "expected 3 fields", "found 4", "1 row(s)"]),
    ("binary.csv", "run", ["binary content", "NUL byte at byte offset 22, line 2"]),
    ("latin1.csv", "run", ["line 3", "not valid UTF-8", "byte 0xe9 at byte offset 36"]),
    ("utf16.csv", "run", ["UTF-16", "save it as UTF-8"]),
    ("workbook.xlsx", "run", ["unsupported format (Excel workbook)", "supported formats: CSV (.csv)", "Parquet"]),
    ("zip_renamed.csv", "run", ["unsupported format (ZIP archive or Excel workbook)", "supported formats"]),
    ("json_array.json", "run", ["is a JSON array", "JSON lines"]),
    ("bad_syntax.jsonl", "run", ["line 3", "invalid JSON lines"]),
    ("corrupt.csv.gz", "run", ["corrupt or truncated gzip"]),
    ("empty_id.csv", "run", ["line 3", "empty user_id"]),
    ("a_directory", "run", ["is a directory, not a file"]),
    ("does_not_exist.csv", "run", ["does_not_exist.csv", "no such file"]),
]


@pytest.mark.parametrize("name,kind,fragments", CASES, ids=[c[0] for c in CASES])
def test_bad_file_message(name, kind, fragments):
    with pytest.raises(MetricsError) as info:
        read_table(BAD / name, kind=kind)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(str(BAD / name) + ":")
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def test_every_bad_fixture_is_covered():
    covered = {c[0] for c in CASES}
    # these two are checked at evaluation time (test_cli_bad_inputs)
    covered |= {"logloss_scores.csv", "disjoint_users.csv"}
    assert {p.name for p in BAD.iterdir()} == covered - {"does_not_exist.csv"}


def test_run_kind_needs_score_or_rank():
    with pytest.raises(MetricsError, match=r"required score column missing .*or a rank column"):
        read_run(b"user_id,item_id,relevance\nu,i,1\n", name="r.csv")


def test_qrels_kind_needs_relevance():
    with pytest.raises(MetricsError, match=r"r.csv: required relevance column missing \(looked for relevance, rel, label"):
        read_qrels(b"user_id,item_id,score\nu,i,1\n", name="r.csv")


def test_qrels_given_as_run_is_named():
    with pytest.raises(MetricsError, match=r"looks like a qrels file"):
        read_run(b"q1 0 d1 1\n", name="x.run")


def test_explicit_mapping_to_a_missing_column():
    with pytest.raises(MetricsError, match=r"column 'cust' given for user_id is not in the file; columns found"):
        read_run(b"user_id,item_id,score\nu,i,1\n", name="r.csv", columns={"user_id": "cust"})


def test_unknown_role_in_mapping():
    with pytest.raises(MetricsError, match=r"unknown column role 'colour'"):
        read_run(b"user_id,item_id,score\nu,i,1\n", name="r.csv", columns={"colour": "x"})


def test_blank_lines_shift_reported_lines():
    data = b"user_id,item_id,score\n\nu,a,1\n\n   \nu,b,oops\n"
    with pytest.raises(MetricsError, match=r"r.csv: line 6: score column 'score' has non-numeric value 'oops'"):
        read_run(data, name="r.csv")


def test_crlf_and_whitespace_are_accepted():
    df, _ = read_run(b"user_id , item_id ,score\r\n u , a , 1.5 \r\n", name="r.csv")
    assert df.values.tolist() == [["u", "a", 1.5]]


def test_jsonl_ids_mixing_numbers_and_strings_are_read_as_their_text():
    data = b'{"user_id": 1, "item_id": "a", "score": 1}\n{"user_id": "x", "item_id": "b", "score": 2}\n'
    df, _ = read_run(data, name="r.jsonl")
    assert df["user_id"].tolist() == ["1", "x"]
    assert df["score"].tolist() == [1.0, 2.0]


def test_parquet_null_and_nan_scores(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"user_id": ["a", "a", "b"], "item_id": ["x", "y", "z"], "score": [1.0, None, float("nan")]}),
                   tmp_path / "r.parquet")
    with pytest.raises(MetricsError, match=r"r.parquet: row 2: score column 'score' has an empty value; 2 bad score value\(s\) \(1 empty, 1 NaN\)"):
        read_run(tmp_path / "r.parquet")


def test_text_with_parquet_extension(tmp_path):
    (tmp_path / "r.parquet").write_text("user_id,item_id,score\n")
    with pytest.raises(MetricsError, match="not a Parquet file"):
        read_run(tmp_path / "r.parquet")


def test_bad_kind():
    with pytest.raises(MetricsError, match="kind must be one of"):
        read_table(b"x", kind="both")
