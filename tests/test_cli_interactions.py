"""``metrics-core evaluate --interactions``: the users' history read by metrics_core.io and
used for novelty's popularity, checked against a plain-Python formula; bad files answer
with one line and exit 2."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from metrics_core.cli import main


def _files(tmp_path):
    run = pd.DataFrame({"user_id": ["a", "a", "b", "b"], "item_id": ["x", "y", "x", "z"],
                        "score": [0.9, 0.5, 0.8, 0.4]})
    qrels = pd.DataFrame({"user_id": ["a", "b"], "item_id": ["x", "z"], "relevance": [1, 1]})
    history = pd.DataFrame({"uid": ["a", "b", "c", "c", "d"], "iid": ["x", "x", "x", "y", "q"],
                            "ts": [1, 2, 3, 4, 5]})
    paths = {}
    for name, df in (("run", run), ("qrels", qrels), ("history", history)):
        paths[name] = tmp_path / f"{name}.csv"
        df.to_csv(paths[name], index=False)
    return paths, run, history


def _novelty_reference(run, history, k, share_of="users"):
    """mean over users of mean -log2 pop(i) over the top k; pop from the history."""
    if share_of == "users":
        pairs = history.drop_duplicates(["uid", "iid"])
        pop = pairs.groupby("iid").size() / history["uid"].nunique()
    else:
        pop = history.groupby("iid").size() / len(history)
    values = []
    for _, rows in run.sort_values("score", ascending=False).groupby("user_id", sort=True):
        top = rows["item_id"].head(k)
        floor = 1 / (history["uid"].nunique() if share_of == "users" else len(history))
        values.append(sum(-math.log2(pop.get(i, floor)) for i in top) / len(top))
    return sum(values) / len(values)


@pytest.mark.parametrize("share_of", ["users", "interactions"])
def test_interactions_file_sets_novelty_popularity(tmp_path, capsys, share_of):
    paths, run, history = _files(tmp_path)
    code = main(["evaluate", "--run", str(paths["run"]), "--qrels", str(paths["qrels"]), "--metrics", "novelty@2",
                 "--interactions", str(paths["history"]), "--novelty-popularity", share_of, "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    value = json.loads(out)["models"]["run"]["novelty@2"]
    assert value == pytest.approx(_novelty_reference(run, history, 2, share_of), abs=1e-12)


def test_a_bad_interactions_file_is_one_line(tmp_path, capsys):
    paths, _, _ = _files(tmp_path)
    bad = tmp_path / "bad.csv"
    bad.write_text("when,what\n1,2\n")
    code = main(["evaluate", "--run", str(paths["run"]), "--qrels", str(paths["qrels"]), "--metrics", "novelty@2",
                 "--interactions", str(bad)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "bad.csv" in err and "user" in err.lower(), err
