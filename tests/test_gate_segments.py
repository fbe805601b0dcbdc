"""Segment conditions of the regression gate (``... in every locale``, ``... in locale = de``): each
segment's paired test checked against scipy (two-sided, as Compare decides a segment row), the segment
rows corrected by statsmodels' multipletests within the chosen family apart from the overall conditions, a 16% loss in one locale caught and noise
passed; the JUnit XML carries a measured time per test case."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

import metrics_core as mc
from _quick_cases import chosen, covering
from metrics_core.errors import MetricsError
from metrics_core.outputs.junit import junit_xml

LOCALES = ("en", "de", "fr", "es", "it")
PER_LOCALE = 800
CONDITION = "ndcg@10 not worse than baseline by more than 5% in every locale"


class Ev:
    """What check reads of an evaluation: a summary and a per-user table indexed by user id."""

    def __init__(self, values: np.ndarray, users: list[str]):
        self.per_user = pd.DataFrame({"ndcg@10": values}, index=pd.Index(users, name="user_id"))
        self.summary = {"ndcg@10": float(np.mean(values))}


def _population(seed: int = 0):
    rng = np.random.default_rng(seed)
    users = [f"{loc}{i}" for loc in LOCALES for i in range(PER_LOCALE)]
    locale = np.repeat(LOCALES, PER_LOCALE)
    base = rng.uniform(0.2, 0.8, len(users))
    attributes = pd.DataFrame({"user_id": users, "locale": locale, "tier": np.where(rng.random(len(users)) < .5,
                                                                                     "free", "paid")})
    return users, locale, base, attributes


def _noise(base, seed):
    return base + np.random.default_rng(seed).normal(0, 0.05, base.size)


def _loses_in(base, locale, where: str, share: float, seed: int = 1):
    """``base`` with noise, each user of ``where`` losing ``share`` of its value."""
    out = _noise(base, seed)
    out[locale == where] = base[locale == where] * (1 - share) + np.random.default_rng(seed + 1).normal(
        0, 0.05, int((locale == where).sum()))
    return out


def test_a_sixteen_percent_loss_in_one_locale_fails_that_locale_only():
    users, locale, base, attributes = _population()
    drop = _loses_in(base, locale, "de", 0.16)
    report = mc.check(Ev(drop, users), [CONDITION, "ndcg@10 not worse than baseline by more than 5%"],
                      baseline=Ev(base, users), attributes=attributes)
    by_segment = {r.segment: r for r in report if r.segment}
    assert set(by_segment) == {f"locale={loc}" for loc in LOCALES}
    assert [s for s, r in by_segment.items() if not r.passed] == ["locale=de"]
    overall = next(r for r in report if not r.segment)
    assert overall.passed  # over all users the loss (3.2%) is within the 5% margin: only the segment sees it
    assert not report.passed
    line = by_segment["locale=de"].line
    assert line.startswith(f"FAIL {CONDITION} [locale=de]: ") and "over 800 users" in line
    de = locale == "de"
    assert by_segment["locale=de"].relative_diff == pytest.approx(drop[de].mean() / base[de].mean() - 1)


@pytest.mark.parametrize("seed", chosen(range(10), (0, 4, 9)))  # the quick tier: 3 of the 10 seeds
def test_noise_passes_every_segment(seed):
    users, locale, base, attributes = _population(seed)
    report = mc.check(Ev(_noise(base, 100 + seed), users), [CONDITION], baseline=Ev(base, users),
                      attributes=attributes)
    assert report.passed and len(report) == len(LOCALES), report.lines()


def test_segment_p_values_are_scipy_two_sided_and_corrected_together_apart_from_overall():
    users, locale, base, attributes = _population(3)
    cand = _loses_in(base, locale, "fr", 0.08, seed=7)
    conditions = [CONDITION, "ndcg@10 not worse than baseline by more than 1% in every tier",
                  "ndcg@10 not worse than baseline by more than 1%"]
    report = mc.check(Ev(cand, users), conditions, baseline=Ev(base, users), attributes=attributes)
    segment_rows = [r for r in report if r.segment]
    want = []
    for r in segment_rows:
        column, value = r.segment.split("=")
        members = attributes[column].to_numpy() == value
        margin = (0.05 if column == "locale" else 0.01) * base[members].mean()
        want.append(sps.ttest_rel(cand[members], base[members] - margin).pvalue)
    assert [r.p_value for r in segment_rows] == pytest.approx(want, rel=1e-9, abs=1e-15)
    assert [r.p_adjusted for r in segment_rows] == pytest.approx(multipletests(want, method="holm")[1],
                                                                  rel=1e-9, abs=1e-15)
    overall = next(r for r in report if not r.segment)
    one = sps.ttest_rel(cand, base - 0.01 * base.mean(), alternative="less").pvalue
    assert overall.p_value == pytest.approx(one, rel=1e-9) and overall.p_adjusted == pytest.approx(one, rel=1e-9)
    # segments are listed largest first, then by name
    tiers = [r.segment for r in segment_rows if r.segment.startswith("tier=")]
    sizes = attributes["tier"].value_counts()
    assert tiers == [f"tier={t}" for t in sorted(sizes.index, key=lambda t: (-sizes[t], t))]


#: every correction with every family; the quick tier each correction and each family at least once
CORRECTED = covering([(c, f) for f in ("analysis", "attribute", "segment") for c in ("holm", "bonferroni", "bh", "none")],
                     lambda pair: pair[0], lambda pair: pair[1])


@pytest.mark.parametrize("correction, family", CORRECTED, ids=[f"{c}-{f}" for c, f in CORRECTED])
def test_segment_rows_are_corrected_within_the_chosen_family(family, correction):
    users, locale, base, attributes = _population(3)
    cand = _loses_in(base, locale, "fr", 0.03, seed=7)
    conditions = [CONDITION.replace("by more than 5% ", ""), "ndcg@10 not worse than baseline in every tier"]
    report = mc.check(Ev(cand, users), conditions, baseline=Ev(base, users), attributes=attributes,
                      correction=correction, family=family)
    rows = [r for r in report if r.segment]
    raw = [sps.ttest_rel(cand[m], base[m]).pvalue
           for m in (attributes[r.segment.split("=")[0]].to_numpy() == r.segment.split("=")[1] for r in rows)]
    key = {"analysis": lambda r: 0, "attribute": lambda r: r.segment.split("=")[0], "segment": lambda r: r.segment}[family]
    want = np.empty(len(rows))
    for k in {key(r) for r in rows}:
        pick = [i for i, r in enumerate(rows) if key(r) == k]
        p = [raw[i] for i in pick]
        want[pick] = p if correction == "none" else multipletests(
            p, method={"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh"}[correction])[1]
    assert [r.p_adjusted for r in rows] == pytest.approx(list(want), rel=1e-9, abs=1e-15)
    for r, adj in zip(rows, want):  # fails exactly where the segment is significantly worse (two-sided)
        worse = r.value < r.baseline_value
        assert r.passed == (not (adj < 0.05 and worse)), r.line
    assert report.settings["family"] == family


def test_a_threshold_within_one_segment_is_the_mean_there():
    users, locale, base, attributes = _population(4)
    report = mc.check(Ev(base, users), ["ndcg@10 >= 0.5 in locale = de", "ndcg@10 < 0.9 in each locale"],
                      attributes=attributes)
    first = report.results[0]
    assert first.segment == "locale=de" and first.value == pytest.approx(float(np.mean(base[locale == "de"])))
    assert first.passed == (np.mean(base[locale == "de"]) >= 0.5) and first.n == PER_LOCALE
    assert len(report) == 1 + len(LOCALES) and all(r.passed for r in report.results[1:])


def test_users_without_an_attribute_form_the_missing_segment():
    users, locale, base, attributes = _population(5)
    listed = attributes.iloc[: 4 * PER_LOCALE].assign(locale=lambda t: t["locale"].where(t.index % 7 != 0))
    report = mc.check(Ev(_noise(base, 9), users), [CONDITION], baseline=Ev(base, users), attributes=listed)
    sizes = {r.segment: r.n for r in report}
    # the last locale's users are not listed and every 7th listed user has no value
    unlisted = PER_LOCALE + int((np.arange(4 * PER_LOCALE) % 7 == 0).sum())
    assert sizes["locale=(missing)"] == unlisted and sum(sizes.values()) == len(users)


def test_misuse_is_one_line():
    users, locale, base, attributes = _population()
    ev = Ev(base, users)
    cases = [
        (dict(conditions=[CONDITION], baseline=ev), "needs the users' attributes"),
        (dict(conditions=["ndcg@10 >= 0.1 in every country"], attributes=attributes),
         "no user attribute 'country'; the attributes are: locale, tier"),
        (dict(conditions=["ndcg@10 >= 0.1 in locale = nl"], attributes=attributes), "no user has locale = 'nl'"),
        (dict(conditions=["ndcg@10 >= 0.1 in every locale"], attributes=attributes.drop(columns="user_id")),
         "no user_id column"),
        (dict(conditions=["auc >= 0.5 in every locale"], attributes=attributes), "auc has no per-user values"),
    ]
    for kwargs, message in cases:
        with pytest.raises(MetricsError, match=message) as info:
            mc.check(ev, **kwargs)
        assert "\n" not in str(info.value)


def test_attributes_of_any_table_kind():
    pl = pytest.importorskip("polars", reason="pip install -r requirements/dev.txt")
    users, locale, base, attributes = _population(6)
    drop = _loses_in(base, locale, "it", 0.16)
    want = [r.line for r in mc.check(Ev(drop, users), [CONDITION], baseline=Ev(base, users), attributes=attributes)]
    for table in (pl.from_pandas(attributes), pl.from_pandas(attributes).lazy()):
        got = mc.check(Ev(drop, users), [CONDITION], baseline=Ev(base, users), attributes=table)
        assert [r.line for r in got] == want


def test_junit_cases_carry_the_time_each_took():
    users, locale, base, attributes = _population()
    report = mc.check(Ev(_loses_in(base, locale, "de", 0.16), users), [CONDITION, "ndcg@10 >= 0.1"],
                      baseline=Ev(base, users), attributes=attributes)
    import xml.etree.ElementTree as ET

    root = ET.fromstring(junit_xml(report))
    cases = root.findall(".//testcase")
    assert [c.get("name") for c in cases] == [f"{CONDITION} [locale={loc}]" for loc in
                                              [r.segment.split("=")[1] for r in report if r.segment]] + [
        "ndcg@10 >= 0.1"]
    times = [float(c.get("time")) for c in cases]
    assert all(t > 0 for t in times) and [c.get("time") for c in cases] == [f"{r.seconds:.6f}" for r in report]
    suite = float(root.find("testsuite").get("time"))
    assert suite >= sum(times) - 1e-5 and suite == pytest.approx(report.seconds, abs=1e-6)
