"""Compare's section on runs scored on sampled negatives (the 1+N protocol): the table builder against
a plain-Python reference (the sampled-rank distribution counted over every draw of negatives from a
tiny catalogue, each correction found by minimising its objective as the paper writes it, tie orders
enumerated), and the page through Streamlit's AppTest (set by the address and by the widget, off by
default, one-line errors, model names shown as text)."""

from __future__ import annotations

import io
import math
from itertools import combinations, permutations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

pytest.importorskip("streamlit")

import metrics_core as mc  # noqa: E402
from dashboard import sampled_tables as st_tables, text  # noqa: E402
from test_dashboard_pages import app, frame_with, page  # noqa: E402
from test_sampled import _one_plus_n  # noqa: E402

N_ITEMS = 8  # the tiny catalogue of the reference
GAMMA = 0.1


@pytest.fixture(autouse=True)
def private_store(monkeypatch, tmp_path):
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "store"))


def _f(metric: str, k: int, rank: int) -> float:
    """One target at rank ``rank`` (1 = top): the full metric written plainly."""
    if rank > k:
        return 0.0
    return {"hit_rate": 1.0, "recall": 1.0, "ndcg": 1 / math.log2(rank + 1), "map": 1 / rank}[metric]


def _transition(n: int, m: int) -> np.ndarray:
    """P(sampled rank j | full rank r), counted over every set of m negatives drawn from the n - 1 other items
    (the items 0 .. r - 2 are the ones above the target)."""
    draws = list(combinations(range(n - 1), m))
    a = np.zeros((n, m + 1))
    for r in range(1, n + 1):
        for d in draws:
            a[r - 1, sum(i < r - 1 for i in d)] += 1 / len(draws)
    return a


def _correction(metric: str, k: int, n: int, m: int, correction: str) -> np.ndarray:
    """The value of each sampled rank that minimises, over full ranks counted alike, the squared bias
    (least squares) or the squared bias plus gamma times the variance (bias-variance)."""
    a = _transition(n, m)
    f = np.array([_f(metric, k, r) for r in range(1, n + 1)])
    gamma = GAMMA if correction == "bv" else 0.0

    def objective(g):
        mean = a @ g
        return float(((f - mean) ** 2).sum() + gamma * (a @ (g * g) - mean ** 2).sum())
    return minimize(objective, np.zeros(m + 1), method="BFGS", options={"gtol": 1e-12}).x


def _user_value(values, scores: dict, target: str) -> float:
    """Mean of ``values[sampled rank - 1]`` over every order of the items tied with the target."""
    above = sum(s > scores[target] for i, s in scores.items() if i != target)
    tied = [i for i, s in scores.items() if s == scores[target]]
    ranks = [above + order.index(target) for order in permutations(tied)]
    return sum(values[r] for r in ranks) / len(ranks)


# Each user's target and its two sampled negatives. Ids "12" and "12.0" are two items; a run-only user
# (no target) is left out; ties between the target and negatives are averaged over the tie orders.
RUNS = {
    "A": {"u1": ("12", {"12": 0.9, "12.0": 0.5, "x": 0.1}), "u2": ("12", {"12": 0.1, "12.0": 0.5, "x": 0.9}),
          "u3": ("x", {"x": 0.7, "y": 0.2, "12": 0.3}), "u4": ("y", {"y": 0.2, "x": 0.2, "12": 0.9}),
          "u5": ("12", {"12": 0.0, "y": 0.5, "z": 0.6})},
    "B [x](javascript:1)": {"u1": ("12", {"12": 0.5, "12.0": 0.9, "x": 0.1}),
                            "u2": ("12", {"12": 0.5, "12.0": 0.9, "x": 0.1}),
                            "u3": ("x", {"x": 0.5, "y": 0.7, "12": 0.3}), "u4": ("y", {"y": 0.5, "x": 0.6, "12": 0.1}),
                            "u5": ("12", {"12": 0.5, "y": 0.5, "z": 0.6})},
}
METRICS = ["hit_rate@1", "ndcg@2", "recall@1", "map@2", "mrr@2"]  # mrr is not corrected: left out


def _frames(lists: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    run = pd.DataFrame([(u, i, s) for u, (_, scores) in lists.items() for i, s in scores.items()]
                       + [("run_only", "x", 1.0), ("run_only", "y", 0.0), ("run_only", "z", 0.5)],
                       columns=["user_id", "item_id", "score"])
    truth = pd.DataFrame([(u, t, 1) for u, (t, _) in lists.items()], columns=["user_id", "item_id", "relevance"])
    return run, truth


def _reference(lists: dict, label: str, correction: str) -> tuple[float, float]:
    metric, k = label.split("@")
    k = int(k)
    sampled = [_f(metric, k, r) for r in range(1, 4)]
    corrected = _correction(metric, k, N_ITEMS, 2, correction)
    users = list(lists.values())
    return (sum(_user_value(sampled, s, t) for t, s in users) / len(users),
            sum(_user_value(corrected, s, t) for t, s in users) / len(users))


@pytest.mark.parametrize("correction", ["bv", "ls"])
def test_section_against_the_hypergeometric_counted_and_the_objectives_minimised(correction):
    runs = {name: _frames(lists) for name, lists in RUNS.items()}
    names = list(RUNS)
    section = st_tables.sampled_section(runs, METRICS, N_ITEMS, correction, names[0], names[1:])
    table = section.table.set_index(["model", "metric"])
    assert list(section.table.columns) == ["model", "metric", "sampled", "corrected"]
    assert set(section.table["metric"]) == set(METRICS) - {"mrr@2"}
    expected_reversals, outside = set(), set()
    for name, lists in RUNS.items():
        for label in METRICS[:-1]:
            ref = _reference(lists, label, correction)
            assert table.loc[(name, label), "sampled"] == pytest.approx(ref[0], abs=1e-12), (name, label)
            assert table.loc[(name, label), "corrected"] == pytest.approx(ref[1], abs=1e-6), (name, label)
            if not 0 <= ref[1] <= 1:
                outside.add((name, label))
    assert {(line.split(": ")[0], line.split("corrected ")[1].split(" ")[0]) for line in section.cautions} == outside
    for label in METRICS[:-1]:
        (sa, ca), (sb, cb) = (_reference(RUNS[n], label, correction) for n in names)
        if sa != sb and (sa > sb) != (ca > cb):
            expected_reversals.add(label)
    assert expected_reversals  # the data has a pair whose order the correction reverses
    assert {line.split(":")[0] for line in section.reversals} == expected_reversals
    assert all(names[0] in line and names[1] in line and "may reverse under full ranking" in line
               for line in section.reversals)
    assert "2 sampled negatives of a catalogue of 8 items" in section.note


def test_runs_that_are_no_one_plus_n_lists_are_one_line_errors_naming_the_model():
    run, truth = _frames(RUNS["A"])
    bad = {"A": (run, truth), "B": (run[run["item_id"] != "12"], truth)}  # targets missing from B's candidates
    with pytest.raises(mc.MetricsError, match=r"^Model B: user 'u1': its target is not among its scored candidates"):
        st_tables.sampled_section(bad, ["hit_rate@1"], N_ITEMS, "bv", "A", ["B"])
    two = {"A": (run, pd.concat([truth, pd.DataFrame({"user_id": ["u1"], "item_id": ["x"], "relevance": [1]})]))}
    with pytest.raises(mc.MetricsError, match="^Model A: user 'u1' has several relevant items"):
        st_tables.sampled_section(two, ["hit_rate@1"], N_ITEMS, "bv", "A", [])
    with pytest.raises(mc.MetricsError, match="need a catalogue of more than 2 items"):
        st_tables.sampled_section({"A": (run, truth)}, ["hit_rate@1"], 2, "bv", "A", [])
    with pytest.raises(mc.MetricsError, match="covers hr@K"):
        st_tables.sampled_section({"A": (run, truth)}, ["mrr@10"], N_ITEMS, "bv", "A", [])
    long = pd.DataFrame({"user_id": "u", "item_id": [f"i{j}" for j in range(21)], "score": 1.0})
    with pytest.raises(mc.MetricsError, match="^Model A: a catalogue of 1,000,000 items with lists of up to 21 "
                                              "candidates needs 21,000,000 probabilities, more than the page's "
                                              "20,000,000; correct it with metrics-core compare --sampled-items$"):
        st_tables.sampled_section({"A": (long, long[:1])}, ["hit_rate@1"], st_tables.MAX_ITEMS, "bv", "A", [])


def test_a_prepared_model_gives_back_its_run_and_truth():
    run, truth = _frames(RUNS["A"])
    back_run, back_truth = st_tables.run_and_truth(mc.prepare(run, truth))
    key = ["user_id", "item_id"]
    pd.testing.assert_frame_equal(back_run.sort_values(key).reset_index(drop=True),
                                  run.sort_values(key).reset_index(drop=True), check_dtype=False)
    pd.testing.assert_frame_equal(back_truth.sort_values(key).reset_index(drop=True),
                                  truth.sort_values(key).reset_index(drop=True), check_dtype=False)


# ----------------------------------------------------------------------------------------------- the page

HOSTILE = "B [x](javascript:1)"
N, M = 500, 49


def _csv(frame: pd.DataFrame) -> bytes:
    buf = io.StringIO()
    frame.to_csv(buf, index=False)
    return buf.getvalue().encode()


def _one_plus_n_files() -> dict[str, bytes]:
    """The command line's data, on 300 users: A puts 30% of the targets first and the rest deep, B every
    target at full rank 5 to 30; sampled among 49 negatives of 500 items, B leads, corrected, A does."""
    rng = np.random.default_rng(3)
    ranks = {"A": np.where(rng.random(300) < 0.3, 1, rng.integers(200, 501, 300)), HOSTILE: rng.integers(5, 31, 300)}
    out = {}
    for name, r in ranks.items():
        run, qrels = _one_plus_n(r, N, M, seed=4)
        out[f"{name}.csv"] = _csv(run)
    out["qrels.csv"] = _csv(qrels)
    return out


def _uploaded(**query):
    at = app(**query)
    files = _one_plus_n_files()
    at = page(at, "data")
    at.file_uploader(key="upload_runs_0").set_value(
        [(name, data, "text/csv") for name, data in files.items() if name != "qrels.csv"])
    at.file_uploader(key="upload_truth_0").set_value(("qrels.csv", files["qrels.csv"], "text/csv"))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return page(at, "compare"), files


def _direct(files: dict, correction: str) -> dict[str, mc.SampledMetrics]:
    truth = pd.read_csv(io.BytesIO(files["qrels.csv"]), dtype=str).astype({"relevance": int})
    return {name[:-4]: mc.sampled_metrics(pd.read_csv(io.BytesIO(data), dtype={"user_id": str, "item_id": str}),
                                          truth, ["ndcg@10"], n_items=N, correction=correction)
            for name, data in files.items() if name != "qrels.csv"}


def _reversal_warnings(at) -> list[str]:
    return [w.value for w in at.warning if "may reverse under full ranking" in w.value]


def test_page_by_widget_off_by_default_and_one_line_error():
    at, files = _uploaded()
    assert at.number_input(key="compare_sampled_items").value is None
    assert not any("corrected" in df.value.columns for df in at.dataframe)
    assert not _reversal_warnings(at) and not at.error
    assert "compare_sampled_items" not in at.query_params
    verdict_off = frame_with(at, "lift [95% CI]")

    at.number_input(key="compare_sampled_items").set_value(N).run()
    assert not at.exception
    shown = frame_with(at, "corrected").set_index(["model", "metric"])
    for name, res in _direct(files, "bv").items():
        assert shown.loc[(name, "ndcg@10"), "sampled"] == pytest.approx(res.summary.loc["ndcg@10", "sampled"])
        assert shown.loc[(name, "ndcg@10"), "corrected"] == pytest.approx(res.summary.loc["ndcg@10", "corrected"])
    [line] = _reversal_warnings(at)
    assert line == text.md(f"ndcg@10: sampled, {HOSTILE} leads A ", limit=600) + line[len(text.md(
        f"ndcg@10: sampled, {HOSTILE} leads A ")):]  # the model's name shown as text
    assert "](javascript" not in line
    assert at.query_params["compare_sampled_items"] == str(N)
    pd.testing.assert_frame_equal(frame_with(at, "lift [95% CI]"), verdict_off)  # the rest of the page is unchanged

    at.number_input(key="compare_sampled_items").set_value(20).run()  # smaller than the lists of 50 candidates
    assert not at.exception
    [error] = at.error
    assert error.value == text.md("Model A: 49 sampled negatives need a catalogue of more than 49 items; "
                                  "n_items is 20", limit=600)
    assert not _reversal_warnings(at)

    at.number_input(key="compare_sampled_items").set_value(0).run()
    assert not at.exception and not at.error and not _reversal_warnings(at)
    assert "compare_sampled_items" not in at.query_params


def test_page_by_the_address_with_least_squares():
    at, files = _uploaded(compare_sampled_items=N, compare_sampled_correction="ls")
    assert at.number_input(key="compare_sampled_items").value == N
    assert at.selectbox(key="compare_sampled_correction").value == "ls"
    shown = frame_with(at, "corrected").set_index(["model", "metric"])
    for name, res in _direct(files, "ls").items():
        assert shown.loc[(name, "ndcg@10"), "corrected"] == pytest.approx(res.summary.loc["ndcg@10", "corrected"])
    assert any("least squares" in c.value for c in at.caption)
    # least squares at 500 items and 49 negatives: corrected values far outside 0..1, said as such
    unstable = [w.value for w in at.warning if "outside 0 to 1" in w.value]
    direct = _direct(files, "ls")
    assert len(unstable) == sum(not 0 <= r.summary.loc["ndcg@10", "corrected"] <= 1 for r in direct.values()) > 0
    assert all("least squares is ill" in line for line in unstable)
