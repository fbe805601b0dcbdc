"""Text ids stay exactly as written through every file format and the command line.

The ground truth holds, for 25 queries, the distinct docnos ``12.0`` (relevance 3) and ``12``
(relevance 0), as a TREC collection may; trec_eval reads them as two documents. Reference:
pytrec_eval on the same data built in Python (never read by metrics_core).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import pytrec_eval

import _cli as command_line

MEASURES = {"ndcg_cut_10": "ndcg_cut_10", "map": "map", "P_5": "P_5", "recip_rank": "recip_rank"}


def _data():
    rng = np.random.default_rng(11)
    qrels, run = {}, {}
    for q in range(40):
        qid = f"{q:04d}"  # leading zeros are part of the id
        judged = {f"d{j}": int(rng.integers(0, 3)) for j in range(6)}
        if q < 25:
            judged |= {"12.0": 3, "12": 0}
        judged[f"{q}"] = 1  # the id "7" of query "0007" next to the docno "7.0" of the run
        qrels[qid] = judged
        docs = [f"d{j}" for j in range(8)] + ["12", "12.0", f"{q}.0", f"{q}"]
        scores = rng.permutation(len(docs)).astype(float)
        run[qid] = dict(zip(docs, scores))
    return qrels, run


def _rows(nested, value):
    return [{"user_id": u, "item_id": i, value: v} for u, items in nested.items() for i, v in items.items()]


def _write(tmp: Path, fmt: str, qrels, run) -> tuple[Path, Path]:
    q, r = pd.DataFrame(_rows(qrels, "relevance")), pd.DataFrame(_rows(run, "score"))
    paths = tmp / f"qrels.{fmt}", tmp / f"run.{fmt}"
    if fmt == "trec":
        paths[0].write_text("".join(f"{a} 0 {b} {c}\n" for a, b, c in q.itertuples(index=False)))
        paths[1].write_text("".join(f"{a} Q0 {b} 0 {c:g} tag\n" for a, b, c in r.itertuples(index=False)))
    elif fmt in ("csv", "tsv"):
        sep = "," if fmt == "csv" else "\t"
        q.to_csv(paths[0], sep=sep, index=False)
        r.to_csv(paths[1], sep=sep, index=False)
    elif fmt == "jsonl":
        q.to_json(paths[0], orient="records", lines=True)
        r.to_json(paths[1], orient="records", lines=True)
    else:
        pq.write_table(pa.Table.from_pandas(q, preserve_index=False), paths[0])
        pq.write_table(pa.Table.from_pandas(r, preserve_index=False), paths[1])
    return paths


def _cli(*args):
    """``metrics-core ARGS...`` in this process (:mod:`_cli`)."""
    return command_line.run(*args)


@pytest.mark.parametrize("fmt", ["trec", "csv", "tsv", "jsonl", "parquet"])
def test_twelve_and_twelve_point_zero_are_two_documents_as_in_trec_eval(tmp_path, fmt):
    qrels, run = _data()
    qpath, rpath = _write(tmp_path, fmt, qrels, run)
    per_user = tmp_path / "per_user.csv"
    out = _cli("evaluate", "--qrels", qpath, "--run", rpath, "--preset", "trec_eval", "--json",
               "--metrics", ",".join(MEASURES), "--per-user", per_user)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)["models"]["run"]
    ref = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES)).evaluate(run)
    for name in MEASURES:
        assert got[name] == pytest.approx(np.mean([ref[q][name] for q in ref]), rel=1e-12, abs=1e-15), name
    # the per-user file names the queries as written ("0007", not "7")
    table = pd.read_csv(per_user, dtype=str)
    assert set(table["user_id"]) == set(qrels)
    # the run's "7.0" of query "0007" is not the judged "7": no note (both writings are in the run)
    assert "--whole-number-ids" not in out.stderr


def test_the_same_data_with_whole_numbers_chosen_is_refused_in_one_line(tmp_path):
    qrels, run = _data()
    qpath, rpath = _write(tmp_path, "trec", qrels, run)
    out = _cli("evaluate", "--qrels", qpath, "--run", rpath, "--metrics", "ndcg@10", "--whole-number-ids")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "conflicting relevance" in out.stderr and "'12'" in out.stderr and len(out.stderr.splitlines()) == 1
