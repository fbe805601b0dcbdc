"""The Spark engine's refusals, special cases and keywords follow the registry and the conventions table.

No JVM is started: ``metrics_core.spark.evaluate`` refuses metrics and conventions before it
looks at its inputs (a run that is not a Spark DataFrame is refused after them, so reaching that
message means the planner accepted the metrics), and one group's evaluation
(:func:`metrics_core.spark._bucket.evaluate_bucket`) is plain pandas.
"""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core.metrics import registry
from metrics_core.metrics.conventions import CONVENTIONS, Settings
from metrics_core.spark import _support
from metrics_core.spark._bucket import BucketPlan, evaluate_bucket

pytest.importorskip("pyspark")  # evaluate says what to install first; the checks below come after it

from metrics_core import spark as mcs  # noqa: E402

ACCEPTED = "run must be a pyspark DataFrame"  # the first check after the metrics and conventions


def label_of(entry: registry.Metric) -> str:
    if entry.cutoff == registry.CUTOFF_LEVEL:
        return f"{entry.name}@0.5"
    return entry.name if entry.cutoff == registry.CUTOFF_NONE else f"{entry.name}@5"


def side_tables():
    """Item features and interactions, enough for every metric's needs."""
    features = pd.DataFrame({"item_id": ["a", "b"], "f1": [1.0, 0.0]})
    interactions = pd.DataFrame({"user_id": ["u", "v"], "item_id": ["a", "b"]})
    return dict(item_features=features, interactions=interactions)


def spark_message(labels, **keywords) -> str:
    with pytest.raises(mc.MetricsError) as caught:
        mcs.evaluate(None, None, labels, **keywords)
    return str(caught.value)


def replace_entry(monkeypatch, name: str, with_cutoff: bool, **changes) -> registry.Metric:
    """Swap the registry entry that ``name`` (with or without ``@k``) selects for a copy with ``changes``."""
    entries = registry._ENTRIES[name]
    old = registry._select(name, with_cutoff)
    new = dataclasses.replace(old, **changes)
    monkeypatch.setitem(registry._ENTRIES, name, tuple(new if e is old else e for e in entries))
    return new


def test_the_metrics_spark_refuses_are_those_the_registry_marks():
    refused = sorted(m.name for m in registry.METRICS if not m.on_spark)
    assert refused == ["aplt", "arp", "entropy", "gini", "ild", "serendipity_pop", "serendipity_sim"]
    assert sorted(m.name for m in registry.METRICS if m.spark_catalogue) == ["accuracy", "mcc"]
    assert all(m.kind == "ranking" for m in registry.METRICS if m.spark_catalogue)


@pytest.mark.parametrize("entry", [m for m in registry.METRICS if not m.on_spark], ids=lambda m: m.name)
def test_every_refusal_is_one_line_naming_the_metric_and_the_entrys_reason(entry):
    message = spark_message([label_of(entry)], **side_tables())
    assert "\n" not in message
    assert message.startswith(f"{label_of(entry)} is not available in the Spark backend: ")
    assert entry.spark_refusal and entry.spark_refusal in message


@pytest.mark.parametrize("entry", [m for m in registry.METRICS if m.on_spark], ids=lambda m: f"{m.name}-{m.kind}")
def test_every_metric_spark_computes_is_accepted_by_the_planner(entry):
    assert spark_message([label_of(entry)], **side_tables()).startswith(ACCEPTED)


def test_flipping_an_entry_to_refused_refuses_it_with_its_reason(monkeypatch):
    assert spark_message(["ndcg@10"]).startswith(ACCEPTED)
    replace_entry(monkeypatch, "ndcg", True, spark="refused", spark_refusal="a reason written for this test")
    assert spark_message(["ndcg@10"]) == ("ndcg@10 is not available in the Spark backend: a reason written for "
                                          "this test; compute it with mc.evaluate on a pandas sample or drop it")


def test_a_refused_entry_without_a_reason_gets_the_default_one(monkeypatch):
    replace_entry(monkeypatch, "ndcg", True, spark="refused")
    assert registry.SPARK_REFUSAL in spark_message(["ndcg@10"])


def test_flipping_a_refused_entry_to_a_combination_lets_the_planner_accept_it(monkeypatch):
    assert "gini@5 is not available" in spark_message(["gini@5"])
    replace_entry(monkeypatch, "gini", True, spark="item_coverage", spark_refusal="")
    assert spark_message(["gini@5"]).startswith(ACCEPTED)


def test_the_catalogue_requirement_follows_the_entry(monkeypatch):
    features = side_tables()["item_features"]
    assert spark_message(["mcc@5"]).startswith("mcc@5 on Spark needs item_features")
    assert spark_message(["mcc@5"], item_features=features).startswith(ACCEPTED)
    replace_entry(monkeypatch, "mcc", True, spark_catalogue=False)
    assert spark_message(["mcc@5"]).startswith(ACCEPTED)
    replace_entry(monkeypatch, "ndcg", True, spark_catalogue=True)
    assert spark_message(["ndcg@10"]).startswith("ndcg@10 on Spark needs item_features")


def test_an_unknown_combination_is_refused_when_the_table_is_built():
    with pytest.raises(ValueError, match="spark must be one of"):
        dataclasses.replace(registry.METRICS[0], spark="somehow")


# ----------------------------------------------------------------------------- one group, no JVM
def group_data():
    """One group of 30 users with tied scores, graded relevance and item features."""
    rng = np.random.default_rng(3)
    rows, judged = [], []
    for u in range(30):
        for item in rng.choice(40, size=8, replace=False):
            rows.append((f"u{u}", f"i{item}", float(rng.integers(0, 4)) / 4))
        for item in rng.choice(40, size=5, replace=False):
            judged.append((f"u{u}", f"i{item}", int(rng.integers(0, 3))))
    run = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    qrels = pd.DataFrame(judged, columns=["user_id", "item_id", "relevance"])
    features = pd.DataFrame({"item_id": [f"i{i}" for i in range(40)], "f1": rng.random(40), "f2": rng.random(40)})
    return run, qrels, features


def group_plan(labels, qrels, features) -> BucketPlan:
    relevant = qrels[qrels["relevance"] >= 1][["user_id", "item_id"]].drop_duplicates()
    return BucketPlan(specs=tuple(registry.parse_metrics(labels)), conventions=Settings(), diag_k=5,
                      truth_in_run=False, rel_column="relevance", input_order=False, item_features=features,
                      novelty_counts=relevant.groupby("item_id").size(),
                      novelty_users=int(relevant["user_id"].nunique()))


def test_one_group_gives_mc_evaluates_per_user_values_for_every_per_user_metric_spark_computes():
    """All users in one group: each per-user column equals mc.evaluate's on the same frames (popularity for
    novelty counted over the same ground truth as mc.evaluate counts it)."""
    run, qrels, features = group_data()
    # the metrics read over one order of each list are refused under the default ties="average" on these ties
    labels = [label_of(m) for m in registry.METRICS if m.on_spark and m.per_user and not m.one_order]
    plan = group_plan(labels, qrels, features)
    blocks = {kind: values for kind, _, values in evaluate_bucket(run, qrels, plan)}
    local = mc.evaluate(run, qrels, labels, item_features=features)
    assert [s.label for s in plan.per_user_specs] == list(local.per_user.columns)
    for i, spec in enumerate(plan.per_user_specs):
        np.testing.assert_allclose(np.asarray(blocks["u"][f"m{i}"], dtype=float),
                                   local.per_user[spec.label].to_numpy(dtype=float), rtol=1e-12, equal_nan=True)


def test_one_group_writes_the_per_item_blocks_the_entries_ask_for(monkeypatch):
    """Per-item blocks come from the entry's combination: "c" for item_coverage, "p" for item_pairs; an entry
    flipped to the other combination changes the block written for it."""
    run, qrels, features = group_data()

    def kinds(labels):
        return [kind for kind, _, _ in evaluate_bucket(run, qrels, group_plan(labels, qrels, features))]

    assert "c" in kinds(["coverage@5"]) and "p" not in kinds(["coverage@5"])
    replace_entry(monkeypatch, "coverage", True, spark="item_pairs")
    assert "p" in kinds(["coverage@5"]) and "c" not in kinds(["coverage@5"])


# ----------------------------------------------------------------------------- conventions
def test_signature_lists_every_convention_and_every_keyword_of_mc_evaluate():
    params = inspect.signature(mcs.evaluate).parameters
    for c in CONVENTIONS:  # None: the preset's value, else the default (as mc.evaluate)
        assert params[c.name].kind is inspect.Parameter.KEYWORD_ONLY and params[c.name].default is None
    # progress: the stages mc.evaluate shows in a terminal or notebook; a Spark job shows its own in the Spark UI
    local = set(inspect.signature(mc.evaluate).parameters) - {"run", "qrels", "progress"}
    spark_only = {"run_df", "qrels_df", "n_buckets", "score_ranges", "read_parquet_ranges"}
    assert set(params) - spark_only == local


@pytest.mark.parametrize("keyword, hint", [("gian", "did you mean 'gain'?"),
                                           ("item_feature", "did you mean 'item_features'?"),
                                           ("zzzzzz", "known: gain, ideal")])
def test_an_unknown_keyword_is_one_line_with_a_suggestion(keyword, hint):
    message = spark_message(["ndcg@10"], **{keyword: "x"})
    assert "\n" not in message and f"unknown convention '{keyword}'" in message and hint in message
    with pytest.raises(mc.MetricsError) as local:  # the same line as mc.evaluate's
        mc.evaluate(pd.DataFrame(), None, ["ndcg@10"], **{keyword: "x"})
    assert str(local.value) == message


def test_a_bad_convention_value_is_refused_as_mc_evaluate_refuses_it():
    with pytest.raises(mc.MetricsError) as local:
        mc.evaluate(pd.DataFrame(), None, ["ndcg@10"], gain="cubic")
    assert spark_message(["ndcg@10"], gain="cubic") == str(local.value)


def test_conventions_spark_takes_only_at_their_default_come_from_what_they_apply_to(monkeypatch):
    assert _support.local_only_conventions() == ("novelty_popularity", "novelty_average", "beyond_users")
    message = spark_message(["novelty@5"], novelty_popularity="interactions")
    assert message.startswith("novelty_popularity other than the default are not on the Spark engine yet")
    # novelty computed per group by mc.evaluate: its two conventions would then be honoured
    from metrics_core.metrics import conventions

    named = conventions.entries_of
    monkeypatch.setattr(conventions, "entries_of", lambda item: tuple(
        dataclasses.replace(m, spark="user_mean") if m.name == "novelty" else m for m in named(item)))
    assert _support.local_only_conventions() == ("beyond_users",)


def test_what_a_convention_applies_to_is_data_the_registry_resolves():
    """applies_to holds kinds and metric names (no prose to parse): every item resolves to registry entries,
    "precision@k" is the ranking entry and "precision" the classification one, and the docs' words are
    written from the data."""
    from metrics_core.metrics import conventions

    for c in conventions.CONVENTIONS:
        assert c.applies_to and all(conventions.entries_of(item) for item in c.applies_to), c.name
    by_name = conventions.BY_NAME
    assert [(m.name, m.kind) for m in by_name["precision_norm"].entries()] == [("precision", "ranking")]
    assert {m.kind for m in by_name["threshold"].entries()} == {"scored"}
    assert {m.kind for m in by_name["unjudged_rows"].entries()} == {"scored", "scored_per_user"}
    assert by_name["relevance_threshold"].applies_text == "all"
    assert by_name["unjudged_rows"].applies_text == "scored rows"
    assert by_name["gain"].applies_text == "cg, dcg, ndcg"


def test_what_spark_refuses_of_a_convention_is_its_declaration(monkeypatch):
    """The conventions Spark takes at their default only, and why, are read from each declaration
    (``spark_default_only``, or ``spark_refusal()`` from the registry): the refusal says the reason, and a
    convention declared so is refused by keyword and by a preset alike."""
    from metrics_core.metrics import conventions

    declared = conventions.BY_NAME["run_only_users"].spark_default_only
    assert declared and _support.DEFAULT_ONLY == ("run_only_users",)
    message = spark_message(["ndcg@10"], run_only_users="zero")
    assert message == f"run_only_users other than the default are not on the Spark engine yet ({declared}); " \
                      "use --engine local"
    assert spark_message(["auc"], preset="trectools").startswith("run_only_users other than the default")
    assert conventions.BY_NAME["gain"].spark_refusal() == "" and spark_message(["ndcg@10"], gain="binary") \
        .startswith(ACCEPTED)
    # a convention declared so is refused on Spark; undeclared, it is computed
    from metrics_core.spark import _evaluate

    monkeypatch.setattr(_evaluate, "DEFAULT_ONLY", ())
    assert spark_message(["ndcg@10"], run_only_users="zero").startswith(ACCEPTED)
    by_name = dict(conventions.BY_NAME, gain=dataclasses.replace(conventions.BY_NAME["gain"],
                                                                 spark_default_only="a reason"))
    monkeypatch.setattr(_support, "CONVENTIONS", tuple(by_name.values()))
    assert _support.default_only_conventions() == ("gain", "run_only_users")


def test_a_preset_diversity_convention_counts_only_with_a_diversity_metric():
    assert spark_message(["ndcg@10"], preset="rectools").startswith(ACCEPTED)  # its beyond_users="listed"
    assert spark_message(["coverage@5"], preset="rectools").startswith("beyond_users other than the default")
    assert spark_message(["ndcg@10"], beyond_users="listed").startswith("beyond_users other than the default")


def test_the_spark_page_names_what_spark_refuses():
    """docs/spark.md lists the refused metrics, the catalogue metrics and the conventions taken at
    their default only, as the registry and the conventions table say today."""
    import re
    from pathlib import Path

    text = " ".join((Path(__file__).resolve().parents[1] / "docs" / "spark.md").read_text(encoding="utf-8").split())
    refused = re.search(r"Not on Spark yet, refused with one line naming the metric and the reason: ([^;]*);", text)
    assert refused, "docs/spark.md lost its list of refused metrics"
    assert sorted(re.findall(r"`(\w+)(?:@k)?`", refused.group(1))) == sorted(
        m.name for m in registry.METRICS if not m.on_spark)
    catalogue = re.search(r"; ([^;]*) need `item_features` there", text)
    assert sorted(re.findall(r"`(\w+)(?:@k)?`", catalogue.group(1))) == sorted(
        m.name for m in registry.METRICS if m.spark_catalogue)
    table = re.search(r"<!-- spark-conventions:start -->(.*)<!-- spark-conventions:end -->", text)
    assert table, "docs/spark.md lost its table of conventions taken at their default only"
    assert sorted(re.findall(r"\| `(\w+)` \|", table.group(1))) == sorted(
        ["novelty_popularity", "novelty_average", "beyond_users", "run_only_users"])
    assert sorted([*_support.LOCAL_ONLY, *_support.DEFAULT_ONLY]) == sorted(
        ["novelty_popularity", "novelty_average", "beyond_users", "run_only_users"])
