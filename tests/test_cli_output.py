"""The shared printing helpers of the command line (metrics_core.commands._output)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from metrics_core.commands import _output
from metrics_core.errors import MetricsError


def test_table_alignment_and_nan():
    text = _output.format_table(["model", "ndcg@10", "users"], [["bm25", 0.123456, 12], ["a-long-name", float("nan"), 3]])
    assert text.splitlines() == [
        "model        ndcg@10  users",
        "-----------  -------  -----",
        "bm25          0.1235     12",
        "a-long-name        -      3",
    ]


def test_csv_full_precision_and_empty_nan():
    text = _output.format_csv(["model", "x"], [["m,1", 1 / 3], ["m2", float("nan")]])
    assert text == 'model,x\n"m,1",0.3333333333333333\nm2,\n'


def test_json_is_strict():
    text = _output.format_json({"a": float("nan"), "b": np.float64(0.5), "c": [np.int64(3), float("inf")], "d": np.bool_(True)})
    assert json.loads(text) == {"a": None, "b": 0.5, "c": [3, None], "d": True}
    assert "NaN" not in text


@pytest.mark.parametrize("ext", ["csv", "tsv", "parquet", "pq"])
def test_write_frame_round_trip(tmp_path, ext):
    df = pd.DataFrame({"model": ["a", "b"], "user_id": ["007", "u2"], "ndcg@10": [0.5, 0.25]})
    path = tmp_path / f"out.{ext}"
    _output.write_frame(df, path)
    if ext in ("parquet", "pq"):
        back = pd.read_parquet(path)
    else:
        back = pd.read_csv(path, sep="\t" if ext == "tsv" else ",", dtype={"user_id": str})
    assert back["user_id"].tolist() == ["007", "u2"] and back["ndcg@10"].tolist() == [0.5, 0.25]


def test_write_frame_errors(tmp_path):
    df = pd.DataFrame({"a": [1]})
    with pytest.raises(MetricsError, match=r"unknown output extension '.xlsx'"):
        _output.write_frame(df, tmp_path / "x.xlsx")
    with pytest.raises(MetricsError, match=r"cannot write"):
        _output.write_frame(df, tmp_path / "missing_dir" / "x.csv")
