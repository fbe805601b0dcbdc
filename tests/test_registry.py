"""The metric table and the conventions: parser, generated documentation tables, CLI options, directions.

References: docs/metrics.md and docs/conventions-and-presets.md (must equal what the tables generate),
``inspect.signature(mc.evaluate)`` for the defaults, scikit-learn's
``roc_auc_score`` per user for ``--gauc-weight``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import pydoc
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

import metrics_core as mc
from metrics_core.metrics import conventions, derived, diversity, reductions, registry
from metrics_core import docs_tables, naming
from metrics_core.analysis import stats
from metrics_core.cli import main
from metrics_core.metrics.presets import PRESETS, get as get_preset
from metrics_core.kernels.ranking import KERNEL_FAMILIES
from metrics_core.metrics.reductions import RowReduction

ROOT = Path(__file__).resolve().parents[1]


def test_documentation_tables_match_the_registry():
    metrics = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    assert docs_tables.render(metrics) == metrics, "run: python -m metrics_core.docs_tables docs/metrics.md"
    for m in registry.METRICS:
        assert f"`{m.display}`" in metrics
    page = ROOT / "docs" / "conventions-and-presets.md"
    text = page.read_text(encoding="utf-8")
    assert docs_tables.render(text) == text, "run: python -m metrics_core.docs_tables docs/conventions-and-presets.md"
    for c in conventions.CONVENTIONS:
        assert f"`{c.option}`" in text
    for p in PRESETS:
        assert f"| `{p.name}` | {p.library} |" in text


def test_every_generated_page_is_up_to_date(monkeypatch, capsys):
    """``python -m metrics_core.docs_tables --check`` without a path checks every page holding a section."""
    monkeypatch.chdir(ROOT)
    assert docs_tables.main(["--check"]) == 0
    assert capsys.readouterr().err == ""
    for page in docs_tables.PAGES:  # each holds at least one generated section
        assert any(f"<!-- {section}:start -->" in (ROOT / page).read_text(encoding="utf-8")
                   for section in docs_tables.SECTIONS), page


def test_docs_tables_check_fails_on_a_stale_file(tmp_path):
    text = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    stale = tmp_path / "metrics.md"
    stale.write_text(text.replace("| `auc` (`roc_auc`) |", "| `auc` |"), encoding="utf-8")
    assert docs_tables.main([str(stale), "--check"]) == 1
    assert docs_tables.main([str(stale)]) == 0
    assert stale.read_text(encoding="utf-8") == text
    assert docs_tables.main([str(stale), "--check"]) == 0


def test_every_entry_is_complete():
    for m in registry.METRICS:
        assert m.kind in registry.KINDS, m
        assert m.direction in (registry.HIGHER, registry.LOWER), m
        assert set(m.needs) <= set(registry.NEEDS), m
        assert m.formula and m.meaning.endswith("."), m
        # how it is computed, bound where it runs: a kernel column or a derivation, a reduction, or a diversity
        # function (the registry itself holds no computation)
        if m.kind in ("ranking", "pooled"):
            derivation = derived.BY_FAMILY.get(m.family)
            assert m.family in KERNEL_FAMILIES or (derivation is not None and derivation.when is None), m
            assert m.name not in diversity.BY_METRIC, m
            assert set(derivation.columns if derivation else ()) <= set(KERNEL_FAMILIES), m
        elif m.on_scored_rows:
            assert m.family is None, m
            assert isinstance(reductions.BY_METRIC[m.name], RowReduction), m
        else:
            assert m.family is None, m
            assert callable(diversity.BY_METRIC[m.name]), m
    # every binding names an entry of its kind: nothing is computed that the registry does not declare
    assert set(derived.BY_FAMILY) == ({m.family for m in registry.metrics_of_kind("ranking", "pooled")}
                                      - set(KERNEL_FAMILIES)) | {"precision"}
    assert set(reductions.BY_METRIC) == {m.name for m in registry.metrics_of_kind("scored", "scored_per_user")}
    assert set(diversity.BY_METRIC) == {m.name for m in registry.metrics_of_kind("diversity")}
    # a name is listed twice only when one entry takes @k and the other does not
    for name in registry.METRIC_NAMES:
        entries = [m for m in registry.METRICS if m.name == name]
        assert len(entries) in (1, 2)
        if len(entries) == 2:
            assert sorted(m.cutoff for m in entries) == ["none", "required"]
    # an alias never names two different metrics, and never hides a canonical name
    assert not set(registry.ALIASES) & set(registry.METRIC_NAMES)


@pytest.mark.parametrize("metric", registry.METRICS, ids=lambda m: f"{m.kind}-{m.name}")
def test_every_name_and_alias_parses_to_its_entry(metric):
    suffix = {"none": "", "level": "@0.5"}.get(metric.cutoff, "@5")
    for name in (metric.name, *metric.aliases):
        for written in (name + suffix, name.upper() + suffix):
            spec = mc.parse_metric(written)
            assert spec.entry == metric and spec.kind == metric.kind and spec.label == written
            assert registry.lookup(written) == metric
    if metric.cutoff == "none" and len([m for m in registry.METRICS if m.name == metric.name]) == 1:
        with pytest.raises(mc.MetricsError, match="takes no cutoff"):
            mc.parse_metric(metric.name + "@5")


def test_precision_with_and_without_cutoff():
    assert mc.parse_metric("precision@3").kind == "ranking"
    assert mc.parse_metric("p").kind == "scored"
    assert registry.lookup("P@10").family == "precision"
    assert registry.lookup("log_loss").name == "logloss"


@pytest.mark.parametrize("label, hint", [("ndgc@10", "did you mean 'ndcg'"), ("recal@5", "did you mean 'recall'"),
                                         ("zzzz", "known metrics: accuracy")])
def test_unknown_names_suggest(label, hint):
    with pytest.raises(mc.MetricsError) as err:
        registry.lookup(label)
    assert hint in str(err.value) and "\n" not in str(err.value)


def test_direction_for_stats_and_compare():
    assert {"rmse", "mae", "logloss", "log_loss"} <= stats.LOWER_IS_BETTER
    assert not {"ndcg", "auc", "map"} & stats.LOWER_IS_BETTER
    assert registry.higher_is_better("ndcg@10") and registry.higher_is_better("AUC")
    assert not registry.higher_is_better("log_loss") and not registry.higher_is_better("RMSE")


def test_help_lists_every_metric():
    text = registry.help_text()
    for m in registry.METRICS:
        assert m.display in text


def test_every_convention_is_a_keyword_left_to_the_preset_or_default():
    # keywords default to None so that a preset can set them; the declared default applies otherwise
    params = inspect.signature(mc.evaluate).parameters
    for c in conventions.CONVENTIONS:
        assert params[c.name].default is None, c.name
    assert mc.evaluate(pd.DataFrame({"user_id": [1], "item_id": [1], "score": [1.0]}),
                       pd.DataFrame({"user_id": [1], "item_id": [1], "relevance": [1]})).conventions == \
        conventions.defaults()


@pytest.mark.parametrize("func", [mc.evaluate, mc.metric_curve], ids=["evaluate", "metric_curve"])
def test_signature_and_help_list_every_convention(func):
    # the keywords come from CONVENTIONS (in its order, after the function's own), each with its default in help()
    params = inspect.signature(func).parameters
    keywords = [name for name, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert keywords[-len(conventions.CONVENTIONS):] == [c.name for c in conventions.CONVENTIONS]
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    text = pydoc.render_doc(func, renderer=pydoc.plaintext)
    for c in conventions.CONVENTIONS:
        default = f"default {c.default:g}" if c.is_number else f"{c.default} (default)"
        assert f"``{c.name}``: " in text and default in text.split(f"``{c.name}``: ")[1].split("\n")[0], c.name


def test_unknown_convention_keyword_names_the_closest():
    data = pd.DataFrame({"user_id": [1], "item_id": [1], "score": [1.0], "relevance": [1]})
    with pytest.raises(mc.MetricsError, match="unknown convention 'gian'; did you mean 'gain'"):
        mc.evaluate(data, data, gian="linear")
    with pytest.raises(mc.MetricsError, match="unknown convention 'gian'; did you mean 'gain'"):
        mc.metric_curve(mc.prepare(data, data), ["ndcg"], gian="linear")


def test_settings_are_resolved_once_and_immutable():
    s = conventions.settle("rectools", ap_norm="relevant", gain=None)
    assert s.ap_norm == "relevant" and s["ap_norm"] == "relevant"  # the keyword wins over the preset
    assert s.ideal == get_preset("rectools").settings["ideal"]  # the preset's value
    assert s.beta == 1.0 and list(s) == [c.name for c in conventions.CONVENTIONS]
    assert s.explicit() == {"ap_norm": "relevant"}  # None is "not given"
    with pytest.raises(AttributeError):
        s.gain = "binary"
    with pytest.raises(TypeError):
        s["gain"] = "binary"
    changed = s.replace(gain="exponential")
    assert changed.gain == "exponential" and s.gain != "exponential"
    assert changed.explicit() == {"ap_norm": "relevant", "gain": "exponential"}
    with pytest.raises(mc.MetricsError, match="gain must be one of"):
        s.replace(gain="log")


def test_every_convention_is_an_option_with_its_default():
    parser = argparse.ArgumentParser()
    conventions.add_arguments(parser)
    assert conventions.from_args(parser.parse_args([])).explicit() == {}
    assert dict(conventions.from_args(parser.parse_args([]))) == conventions.defaults()
    args = parser.parse_args(["--gauc-weight", "positives", "--ap-norm", "min_k", "--threshold", "0.3"])
    got = conventions.from_args(args)
    assert got["gauc_weight"] == "positives" and got["ap_norm"] == "min_k" and got["threshold"] == 0.3
    with pytest.raises(SystemExit):
        parser.parse_args(["--gauc-weight", "clicks"])


def test_widget_specs_cover_every_convention():
    specs = conventions.widget_specs()
    assert [s["name"] for s in specs] == [c.name for c in conventions.CONVENTIONS]
    for s in specs:
        assert s["widget"] in ("select", "number") and s["help"] and "`" not in s["help"]
        if s["widget"] == "select":
            assert s["options"][0] == s["default"]


@pytest.mark.parametrize("kwargs, fragment", [({"gain": "log"}, "gain must be one of linear, exponential"),
                                              ({"threshold": "high"}, "threshold must be a finite number"),
                                              ({"colour": "red"}, "unknown convention")])
def test_validate_rejects(kwargs, fragment):
    with pytest.raises(mc.MetricsError, match=fragment):
        conventions.validate(**kwargs)


def _gauc_reference(rows: pd.DataFrame, weight: str) -> float:
    num = den = 0.0
    for _, g in rows.groupby("user_id"):
        y = (g["relevance"] >= 1).astype(int)
        if y.nunique() < 2:
            continue
        w = {"rows": len(g), "positives": int(y.sum()), "uniform": 1}[weight]
        num += w * roc_auc_score(y, g["score"])
        den += w
    return num / den


@pytest.mark.parametrize("weight", ["rows", "positives", "uniform"])
def test_cli_gauc_weight_option(tmp_path, capsys, weight):
    rng = np.random.default_rng(7)
    n = 120
    rows = pd.DataFrame({"user_id": rng.integers(0, 9, n).astype(str), "item_id": [f"i{j}" for j in range(n)],
                         "score": rng.random(n).round(2), "relevance": rng.integers(0, 2, n)})
    path = tmp_path / "run.csv"
    rows.to_csv(path, index=False)
    status = main(["evaluate", "--run", str(path), "--metrics", "gauc", "--gauc-weight", weight, "--json"])
    assert status == 0
    got = json.loads(capsys.readouterr().out)["models"]["run"]["gauc"]
    assert got == pytest.approx(_gauc_reference(rows, weight), abs=1e-12)


@pytest.mark.parametrize("path, name", [
    ("runs/bm25.trec.gz", "bm25"), ("two_tower.csv", "two_tower"), ("model.v2.parquet", "model.v2"),
    ("C:\\x\\ctr.jsonl.gz", "ctr"), ("runs/bm25.parquet/", "bm25"), ("a/b/run.v1.2.tsv.bz2", "run.v1.2"),
    ("noext", "noext"), ("weird.xyz", "weird.xyz"), (".csv", ".csv"),
])
def test_model_name_strips_only_known_data_and_compression_extensions(path, name):
    assert naming.model_name(path) == name


def test_model_names_prefer_the_short_name_and_tell_clashes_apart():
    assert naming.model_names(["model.v2.parquet"]) == (["model"], [])
    names, notes = naming.model_names(["model.v1.parquet", "model.v2.parquet", "other.csv"])
    assert names == ["model.v1", "model.v2", "other"] and len(notes) == 1


def test_needs_name_the_tables_a_metric_reads():
    assert registry.lookup("ndcg@10").tables == ("run", "qrels")
    assert registry.lookup("coverage").tables == ("run", "item_features")  # the catalogue, when given
    assert registry.lookup("serendipity_sim").tables == ("run", "qrels", "interactions")
    assert registry.lookup("logloss").tables == ("run", "qrels")  # probabilities are the run's scores
    # the catalogue size is read only for the metrics that need it
    assert {m.name for m in registry.METRICS if "catalogue" in m.needs} == {"mcc", "accuracy", "coverage", "gini",
                                                                          "serendipity_pop"}
    assert all(m.kind == "ranking" for m in registry.METRICS if m.name in ("mcc", "accuracy") and "catalogue" in m.needs)
    # an entry comparing two runs is refused by evaluate, which takes one run
    from dataclasses import replace

    from metrics_core.evaluation import check_needs

    entry = replace(registry.lookup("ndcg@10"), needs=("relevance", "reference"))
    spec = registry.MetricSpec(name="ndcg", k=10, label="ndcg@10", kind="ranking", metric=entry)
    assert entry.tables == ("run", "qrels", "reference run")
    with pytest.raises(mc.MetricsError, match="compares two runs"):
        check_needs([spec], item_features=None)


def test_the_registry_and_stats_are_declarations_importable_without_numba():
    """The registry only declares and stats needs only its directions: importing them (with the package's
    own __init__ left out, which imports the evaluation) loads neither numba nor a kernel module."""
    import subprocess
    import sys

    code = (
        "import sys, types\n"
        "package = types.ModuleType('metrics_core')\n"
        f"package.__path__ = [{str(Path(registry.__file__).resolve().parent)!r}]\n"
        "sys.modules['metrics_core'] = package\n"
        "import metrics_core.metrics.registry, metrics_core.analysis.stats\n"
        "loaded = sorted(m for m in sys.modules if m == 'numba' or m.startswith(('numba.', 'metrics_core.kernels')))\n"
        "print(loaded)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]", done.stdout
