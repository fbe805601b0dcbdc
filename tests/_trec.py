"""Small parsers for trec_eval's test fixtures (TEST use only).

Files (see tests/data/trec_eval/README.md):

* qrels:   ``qid  iter  docno  rel``           -> DataFrame user_id, item_id, relevance
* results: ``qid  Q0  docno  rank  score  tag [junk...]`` -> DataFrame user_id, item_id, score
  (trec_eval ignores the rank column and anything after the tag)
* out.test.*: ``measure  qid|all  value``       -> DataFrame measure, query, value, text

Ids stay strings, exactly as written in the files.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

TREC_EVAL_DIR = Path(__file__).resolve().parent / "data" / "trec_eval"


def read_qrels(path: str | Path) -> pd.DataFrame:
    """Read a TREC qrels file into ``user_id, item_id, relevance`` (int)."""
    df = pd.read_csv(
        path,
        sep=r"\s+",
        header=None,
        names=["user_id", "iter", "item_id", "relevance"],
        dtype={"user_id": str, "iter": str, "item_id": str, "relevance": "int64"},
        engine="python",
    )
    return df[["user_id", "item_id", "relevance"]].reset_index(drop=True)


def read_results(path: str | Path) -> pd.DataFrame:
    """Read a TREC run into ``user_id, item_id, score`` (float).

    Lines may carry extra free text after the tag (results.trunc does), so the
    first six whitespace-separated fields are kept and the rest is ignored.
    """
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            fields = line.split()
            if not fields:
                continue
            rows.append((fields[0], fields[2], float(fields[4])))
    df = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    df["user_id"] = df["user_id"].astype(str)
    df["item_id"] = df["item_id"].astype(str)
    return df


def read_trec_eval_output(path: str | Path) -> pd.DataFrame:
    """Read ``trec_eval -q`` output into ``measure, query, value, text``.

    ``text`` is the value exactly as printed (to know its number of decimals);
    ``value`` is its float, NaN for non-numeric values (relstring, runid).
    """
    df = pd.read_csv(
        path,
        sep=r"\s+",
        header=None,
        names=["measure", "query", "text"],
        dtype=str,
        engine="python",
        quoting=3,
    )
    df["value"] = pd.to_numeric(df["text"], errors="coerce")
    return df[["measure", "query", "value", "text"]]


def expected_table(path: str | Path, measures: list[str]) -> pd.DataFrame:
    """Pivot trec_eval output to a table: index query (``all`` = mean), one column per measure."""
    df = read_trec_eval_output(path)
    df = df[df["measure"].isin(measures)]
    table = df.pivot(index="query", columns="measure", values="value")
    missing = sorted(set(measures) - set(table.columns))
    if missing:
        raise KeyError(f"{path}: measures not printed by trec_eval: {missing}")
    return table[measures]


def printed_decimals(path: str | Path, measure: str) -> int:
    """Number of decimals trec_eval printed for ``measure`` (4 for all float measures)."""
    df = read_trec_eval_output(path)
    text = df.loc[df["measure"] == measure, "text"].iloc[0]
    return len(text.split(".")[1]) if "." in text else 0
