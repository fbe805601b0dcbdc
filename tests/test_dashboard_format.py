"""Number formats and metric help of the dashboard (pure functions, no running app)."""

import math

import pytest

from dashboard import format as fmt
from dashboard import metric_lists
from metrics_core.metrics import registry


@pytest.mark.parametrize("value, shown", [(0.161, "0.1610"), (0.27554, "0.2755"), (1, "1.0000"),
                                          (float("nan"), "–"), (None, "–")])
def test_metric_has_four_decimals(value, shown):
    assert fmt.metric(value) == shown


@pytest.mark.parametrize("value, shown", [(2.14e-18, "< 0.0001"), (0.0, "< 0.0001"), (0.00012, "0.0001"),
                                          (0.04999, "0.0500"), (1.0, "1.0000"), (float("nan"), "–")])
def test_pvalue_never_in_scientific_notation(value, shown):
    assert fmt.pvalue(value) == shown


def test_counts_lifts_and_signs():
    assert fmt.count(18240) == "18,240"
    assert fmt.count(1234567.0) == "1,234,567"
    assert fmt.percent(1.21) == "+121.0%"
    assert fmt.percent(-0.054) == "-5.4%"
    assert fmt.percent(math.inf) == "–"
    assert fmt.signed(0.024) == "+0.0240"


def test_lists_come_from_the_registry():
    per_user = {m.name for m in registry.METRICS if m.kind == "ranking" and m.per_user and "per_user" in m.sections}
    assert set(metric_lists.PER_USER) == per_user
    assert set(metric_lists.DIVERSITY) == {m.name for m in registry.METRICS
                                           if m.kind == "diversity" and "history" not in m.needs}
    assert "hit_ratio" in metric_lists.RANKING and "hit_ratio" not in metric_lists.PER_USER
    for name in metric_lists.NEEDS_PROBABILITIES:
        assert any("probabilities" in m.needs for m in registry.METRICS if m.name == name)


def test_labels_put_the_cutoff_only_where_it_belongs():
    assert metric_lists.labels(["ndcg", "r_precision", "precision"], 5) == ["ndcg@5", "r_precision", "precision@5"]
    assert "precision" in metric_lists.scored_labels()


def test_help_names_formula_direction_and_settings():
    text = metric_lists.help_for("logloss", {"K": 10, "ties": "average"})
    entry = registry.lookup("logloss")
    assert entry.formula in text and "Lower is better" in text and "ties average" in text
    assert metric_lists.help_for("not_a_metric") == ""
    assert set(metric_lists.help_table(["ndcg@10", "users"])) == {"ndcg@10"}


def test_metric_columns_carry_help_and_format():
    columns = fmt.metric_columns(["ndcg@10"], {"K": 10})
    config = columns["ndcg@10"]
    assert config["help"].startswith(registry.lookup("ndcg").meaning)
    assert config["type_config"]["format"] == "%.4f"


def test_scored_row_help_says_what_unjudged_rows_are():
    default = metric_lists.help_for("pcopc", {"K": 10})
    assert "count as negatives (label 0" in default and "unjudged_rows = negative" in default
    left_out = metric_lists.help_for("pcopc", {"unjudged_rows": "exclude"})
    assert "are left out" in left_out and "count as negatives" not in left_out
    assert "judgment" not in metric_lists.help_for("ndcg@10", {"K": 10})  # ranking metrics: not about rows


def test_diagnostic_sentences_agree_with_their_counts():
    import pandas as pd

    import metrics_core as mc
    from dashboard import tables

    qrels = pd.DataFrame({"user_id": ["u1", "u2", "u3"], "item_id": "a", "relevance": 1})
    one_missing = pd.DataFrame({"user_id": ["u1", "u2"], "item_id": "a", "score": 0.5})
    two_missing = pd.DataFrame({"user_id": ["u1"], "item_id": "a", "score": 0.5})
    diags = {name: mc.evaluate(run, qrels, metrics=["ndcg@1"]).diagnostics
             for name, run in (("m1", one_missing), ("m2", two_missing))}
    said = tables.diagnostics_problems(diags, "all")
    assert said == ["m1: 1 (33.3%) user of the ground truth is missing from the run; it scores 0 for it when it "
                    "has relevant items (Users counted: all).",
                    "m2: 2 (66.7%) users of the ground truth are missing from the run; they score 0 for it when "
                    "they have relevant items (Users counted: all)."]
    assert tables.diagnostics_problems(diags, "served")[0].endswith(
        "user of the ground truth is missing from the run; it is left out of every model's numbers "
        "(Users counted: served).")
    # a run whose only user has no ground truth
    stray = pd.DataFrame({"user_id": ["u1", "x"], "item_id": "a", "score": 0.5})
    ev = mc.evaluate(stray, qrels[qrels.user_id == "u1"], metrics=["ndcg@1"])
    assert tables.diagnostics_problems({"m": ev.diagnostics}) == [
        "m: 1 (50.0%) user of the run has no ground truth and is left out; check that the user ids match."]
    # the table's headers at K = 1
    assert "fewer than 1 item" in tables.diagnostics_table(diags).columns
