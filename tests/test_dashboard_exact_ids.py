"""The dashboard keeps text ids exactly as written: a TREC ground truth holding the docnos
``12.0`` (relevance 3) and ``12`` (relevance 0) is accepted, and the Failures page lists both
items under their own names with their own grades. Reference: the relevance written in the file."""

from __future__ import annotations

from pathlib import Path

import _deadlines as deadlines
import numpy as np
import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")


def _files() -> dict[str, bytes]:
    rng = np.random.default_rng(3)
    qrels, runs = [], {"bm25": [], "dense": []}
    for q in range(30):
        qid = f"{q:04d}"
        qrels += [f"{qid} 0 12.0 3", f"{qid} 0 12 0", f"{qid} 0 d{q} 1"]
        for name, run in runs.items():
            docs = ["12", "12.0", f"d{q}", "7", "7.0"] + [f"x{j}" for j in range(5)]
            for rank, doc in enumerate(rng.permutation(docs)):
                run.append(f"{qid} Q0 {doc} {rank + 1} {10 - rank} {name}")
    out = {f"{name}.trec": ("\n".join(run) + "\n").encode() for name, run in runs.items()}
    out["qrels.txt"] = ("\n".join(qrels) + "\n").encode()
    return out


def test_twelve_and_twelve_point_zero_stay_two_items_on_data_and_failures(monkeypatch, tmp_path):
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "store"))
    at = AppTest.from_file(APP, default_timeout=deadlines.SCRIPT_RUN)
    at.run()
    at.switch_page("views/data.py").run()
    f = _files()
    at.file_uploader(key="upload_runs_0").set_value([(n, d, "text/plain") for n, d in f.items() if n != "qrels.txt"])
    at.file_uploader(key="upload_truth_0").set_value(("qrels.txt", f["qrels.txt"], "text/plain"))
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert not [w for w in at.warning if "whole number" in w.value]  # both writings on both sides: no note
    at.query_params["user"] = "0022"  # the leading zeros are part of the id
    at.switch_page("views/failures.py").run()
    assert not at.exception and not at.error
    listed = next(df.value for df in at.dataframe if {"item_id", "relevance", "rank · dense"} <= set(df.value.columns))
    grade = dict(zip(listed["item_id"].astype(str), listed["relevance"].astype(str)))
    assert grade["12.0"] == "3" and grade["12"] == "0" and grade["7.0"] == grade["7"] == "unjudged"
