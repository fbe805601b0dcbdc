"""metrics_core.analysis.stats against scipy.stats and hand-computed small cases."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sst

from metrics_core.analysis import stats
from metrics_core.errors import MetricsError


@pytest.fixture
def pair():
    rng = np.random.default_rng(7)
    a = rng.random(40)
    b = np.clip(a + rng.normal(0.05, 0.15, 40), 0, 1)
    return a, b


# ---------------------------------------------------------------- bootstrap

def test_bootstrap_ci_hand_cases():
    assert all(math.isnan(v) for v in stats.bootstrap_ci([]))
    assert stats.bootstrap_ci([0.25]) == (0.25, 0.25)
    assert stats.bootstrap_ci([0.5, 0.5, 0.5]) == (0.5, 0.5)
    assert stats.bootstrap_ci([1.0, np.nan, 1.0]) == (1.0, 1.0)  # NaN ignored


def test_bootstrap_ci_is_seeded_and_brackets_mean(pair):
    a, _ = pair
    lo, hi = stats.bootstrap_ci(a, seed=3)
    assert (lo, hi) == stats.bootstrap_ci(a, seed=3)
    assert lo < a.mean() < hi


def test_bootstrap_ci_matches_scipy_percentile(pair):
    a, _ = pair
    lo, hi = stats.bootstrap_ci(a, n_resamples=20000, seed=1)
    ref = sst.bootstrap((a,), np.mean, method="percentile", n_resamples=20000, rng=np.random.default_rng(2))
    se = a.std(ddof=1) / math.sqrt(a.size)
    # Two independent Monte Carlo estimates of the same quantiles: agree to a small share of the SE
    assert lo == pytest.approx(ref.confidence_interval.low, abs=0.05 * se)
    assert hi == pytest.approx(ref.confidence_interval.high, abs=0.05 * se)


def test_bootstrap_ci_tied_values_multinomial_path():
    # 0/1 per-user hits: few distinct values -> multinomial path. The exact bootstrap
    # distribution of the mean is Binomial(n, p)/n; check its quantiles.
    x = np.array([1.0] * 300 + [0.0] * 700)
    lo, hi = stats.bootstrap_ci(x, n_resamples=20000, seed=0)
    ref_lo, ref_hi = sst.binom.ppf([0.025, 0.975], 1000, 0.3) / 1000
    assert lo == pytest.approx(ref_lo, abs=0.0021)
    assert hi == pytest.approx(ref_hi, abs=0.0021)


def test_bootstrap_ci_bad_confidence():
    with pytest.raises(MetricsError):
        stats.bootstrap_ci([1, 2], confidence=1.5)


# ---------------------------------------------------------------- tests against scipy

def test_paired_t_matches_scipy(pair):
    a, b = pair
    t, p = stats.paired_t_test(a, b)
    ref = sst.ttest_rel(b, a)
    assert t == pytest.approx(ref.statistic) and p == pytest.approx(ref.pvalue)


def test_paired_t_hand_computed():
    a = np.array([0.0, 0.0, 0.0])
    b = np.array([1.0, 2.0, 3.0])
    # d = 1,2,3: mean 2, sd 1, t = 2 / (1/sqrt(3)) = 2*sqrt(3)
    t, p = stats.paired_t_test(a, b)
    assert t == pytest.approx(2 * math.sqrt(3))
    assert p == pytest.approx(2 * sst.t.sf(2 * math.sqrt(3), df=2))


def test_degenerate_tests():
    same = [0.3, 0.4, 0.5]
    assert stats.paired_t_test(same, same) == (0.0, 1.0)
    assert stats.wilcoxon_test(same, same) == (0.0, 1.0)
    assert stats.randomization_test(same, same) == (0.0, 1.0)
    assert stats.cohens_d_paired(same, same) == 0.0
    assert math.isnan(stats.cohens_d_paired([0, 0], [1, 1]))


def test_wilcoxon_matches_scipy(pair):
    a, b = pair
    w, p = stats.wilcoxon_test(a, b)
    ref = sst.wilcoxon(b - a, zero_method="wilcox")
    assert w == pytest.approx(ref.statistic) and p == pytest.approx(ref.pvalue)


def test_wilcoxon_hand_computed_exact():
    # d = 1, 2, 3, -4 : ranks 1,2,3,4; W- = 4, W+ = 6 -> statistic min = 4.
    # Exact two-sided p: P(W+ <= 4 or >= 6) over 16 sign patterns. Sums of subsets of
    # {1,2,3,4} (W+) are 0,1,2,3,3,4,4,5,5,6,6,7,7,8,9,10 -> 2 * P(W+ <= 4) = 2 * 7/16.
    w, p = stats.wilcoxon_test([0, 0, 0, 0], [1, 2, 3, -4])
    assert w == 4.0
    assert p == pytest.approx(14 / 16)


def test_wilcoxon_drops_zero_differences():
    w, p = stats.wilcoxon_test([0, 0, 0, 0, 0.5], [1, 2, 3, -4, 0.5])
    assert (w, p) == pytest.approx((4.0, 14 / 16))


def _exact_randomization(d):
    n = len(d)
    obs = abs(np.mean(d))
    count = 0
    for signs in itertools.product([-1, 1], repeat=n):
        if abs(np.mean(np.array(signs) * d)) >= obs - 1e-12:
            count += 1
    return count / 2 ** n


def test_randomization_exact_hand_case():
    # d = 1, 2, 3: |mean| = 2; only all-plus and all-minus reach |sum| >= 6 -> p = 2/8
    obs, p = stats.randomization_test([0, 0, 0], [1, 2, 3])
    assert obs == 2.0 and p == 0.25


def test_randomization_exact_matches_enumeration_and_scipy():
    rng = np.random.default_rng(3)
    a = rng.random(10)
    b = a + rng.normal(0.1, 0.2, 10)
    obs, p = stats.randomization_test(a, b)  # 2^10 <= 10000 -> exact
    assert obs == pytest.approx(np.mean(b - a))
    assert p == pytest.approx(_exact_randomization(b - a))
    ref = sst.permutation_test((b - a,), lambda x, axis: np.mean(x, axis=axis),
                               permutation_type="samples", vectorized=True, n_resamples=np.inf)
    assert p == pytest.approx(ref.pvalue)


def test_randomization_monte_carlo_within_error_of_exact():
    rng = np.random.default_rng(11)
    n = 16  # 65,536 sign assignments, enumerated exactly below
    a = rng.random(n)
    b = a + rng.normal(0.07, 0.25, n)
    exact = stats.randomization_test(a, b, exact=True)[1]
    B = 20000
    _, mc = stats.randomization_test(a, b, n_resamples=B, seed=5, exact=False)
    se = math.sqrt(exact * (1 - exact) / B)
    assert 0.01 < exact < 0.99
    assert abs(mc - exact) < 4 * se + 1 / B
    # seeded: same seed, same p
    assert stats.randomization_test(a, b, n_resamples=B, seed=5, exact=False)[1] == mc


def test_exact_enumeration_helper_agrees_with_brute_force_n12():
    rng = np.random.default_rng(2)
    d = rng.normal(0.05, 0.3, 12)
    assert stats.randomization_test(np.zeros(12), d, exact=True)[1] == pytest.approx(_exact_randomization(d))


def test_cohens_d_paired_hand_computed():
    # d = 1,2,3 -> mean 2, sd 1 -> d_z = 2
    assert stats.cohens_d_paired([0, 0, 0], [1, 2, 3]) == pytest.approx(2.0)
    assert stats.cohens_d_paired([1, 2, 3], [0, 0, 0]) == pytest.approx(-2.0)


def test_win_tie_loss():
    a = [0.5, 0.5, 0.5, 0.5]
    b = [0.6, 0.5, 0.4, 0.5 + 1e-12]
    assert stats.win_tie_loss(a, b) == (1, 2, 1)
    assert stats.win_tie_loss(a, b, higher_is_better=False) == (1, 2, 1)
    assert stats.win_tie_loss([1, 1, 1], [0, 0, 2], higher_is_better=False) == (2, 0, 1)


# ---------------------------------------------------------------- corrections

def test_holm_hand_computed():
    p = [0.01, 0.04, 0.03, 0.005]
    # sorted 0.005,0.01,0.03,0.04 * 4,3,2,1 = 0.02,0.03,0.06,0.04 -> running max 0.02,0.03,0.06,0.06
    assert stats.holm(p) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_holm_caps_and_nan():
    out = stats.holm([0.3, np.nan, 0.6])
    assert out[0] == pytest.approx(0.6) and math.isnan(out[1]) and out[2] == pytest.approx(0.6)
    assert stats.holm([0.9, 0.8]).tolist() == [1.0, 1.0]


def test_bh_hand_computed():
    p = [0.01, 0.04, 0.03, 0.005]
    # sorted 0.005,0.01,0.03,0.04 * 4/i = 0.02,0.02,0.04,0.04 ; running min from top keeps them
    assert stats.benjamini_hochberg(p) == pytest.approx([0.02, 0.04, 0.04, 0.02])
    p2 = [0.02, 0.03, 0.5]
    # 0.02*3=0.06, 0.03*3/2=0.045, 0.5 -> running min from top: 0.045,0.045,0.5
    assert stats.benjamini_hochberg(p2) == pytest.approx([0.045, 0.045, 0.5])


def test_corrections_against_statsmodels_if_available():
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    p = np.random.default_rng(0).random(25) ** 3
    assert stats.holm(p) == pytest.approx(multitest.multipletests(p, method="holm")[1])
    assert stats.benjamini_hochberg(p) == pytest.approx(multitest.multipletests(p, method="fdr_bh")[1])


def test_adjust_pvalues_unknown():
    with pytest.raises(MetricsError, match="unknown correction"):
        stats.adjust_pvalues([0.1], "bonferonni")


# ---------------------------------------------------------------- pairing

def test_align_pairs_only_common_finite_users():
    a = pd.Series({"u1": 0.1, "u2": 0.2, "u3": np.nan, "u4": 0.4})
    b = pd.Series({"u2": 0.5, "u3": 0.6, "u4": 0.9, "u5": 1.0})
    av, bv, users = stats.align_pairs(a, b)
    assert list(users) == ["u2", "u4"]
    assert av.tolist() == [0.2, 0.4] and bv.tolist() == [0.5, 0.9]


def test_paired_comparison_hand_case():
    a = pd.Series({"u1": 0.0, "u2": 0.0, "u3": 0.0, "only_a": 1.0})
    b = pd.Series({"u3": 3.0, "u1": 1.0, "u2": 2.0, "only_b": 0.0})
    r = stats.paired_comparison(a, b, test="randomization")
    assert r.n == 3
    assert (r.baseline_mean, r.challenger_mean, r.diff) == (0.0, 2.0, 2.0)
    assert (r.wins, r.ties, r.losses) == (3, 0, 0)
    assert r.effect_size == pytest.approx(2.0)
    assert r.p_value == 0.25 and r.p_randomization == 0.25
    assert r.p_t == pytest.approx(sst.ttest_rel([1, 2, 3], [0, 0, 0]).pvalue)
    assert 1.0 <= r.ci_low <= r.ci_high <= 3.0


def test_mean_ci_table():
    df = pd.DataFrame({"m": [0.0, 1.0, 1.0, np.nan], "k": [0.5] * 4})
    t = stats.mean_ci_table(df)
    assert t.loc["m", "mean"] == pytest.approx(2 / 3) and t.loc["m", "n"] == 3
    assert (t.loc["k", "ci_low"], t.loc["k", "ci_high"]) == (0.5, 0.5)


def test_bootstrap_ci_columns_agrees_with_scipy_and_the_bootstrap_variance():
    from scipy.stats import bootstrap as scipy_bootstrap

    from metrics_core.analysis.stats import bootstrap_ci_columns

    rng = np.random.default_rng(11)
    n = 800
    matrix = np.column_stack([rng.random(n), (rng.random(n) < 0.3).astype(float), rng.exponential(2.0, n),
                              np.full(n, 0.25)])
    lows, highs = bootstrap_ci_columns(matrix, n_resamples=4000, seed=1)
    for j in range(3):
        ref = scipy_bootstrap((matrix[:, j],), np.mean, n_resamples=4000, method="percentile",
                              confidence_level=0.95, random_state=2).confidence_interval
        width = ref.high - ref.low
        assert abs(lows[j] - ref.low) < 0.1 * width and abs(highs[j] - ref.high) < 0.1 * width, j
        # a 95% percentile interval of a mean spans about 2 x 1.96 standard errors (sd / sqrt(n))
        se = matrix[:, j].std() / np.sqrt(n)
        assert (highs[j] - lows[j]) == pytest.approx(2 * 1.959964 * se, rel=0.1)
    assert lows[3] == highs[3] == 0.25


def test_bootstrap_ci_columns_drops_non_finite_rows_and_checks_its_input():
    from metrics_core.analysis.stats import bootstrap_ci_columns

    x = np.array([[1.0, 2.0], [np.nan, 3.0], [3.0, 4.0], [5.0, np.inf]])
    lows, highs = bootstrap_ci_columns(x, n_resamples=200)
    assert 1.0 <= lows[0] <= highs[0] <= 3.0 and 2.0 <= lows[1] <= highs[1] <= 4.0
    with pytest.raises(MetricsError):
        bootstrap_ci_columns(np.ones(3))
    with pytest.raises(MetricsError):
        bootstrap_ci_columns(x, confidence=1.5)
    lows, highs = bootstrap_ci_columns(np.empty((0, 2)))
    assert np.isnan(lows).all() and np.isnan(highs).all()


def test_lift_ci_against_a_delta_method_written_out():
    rng = np.random.default_rng(5)
    a = rng.random(500)
    b = a * 1.2 + rng.normal(0, 0.1, 500)
    lift, low, high = stats.lift_ci(a, b)
    ma, mb, n = a.mean(), b.mean(), len(a)
    r = mb / ma
    # gradient of mb/ma w.r.t. (ma, mb) is (-mb/ma^2, 1/ma); Var of the means is the covariance / n
    grad = np.array([-mb / ma**2, 1 / ma])
    se = math.sqrt(grad @ (np.cov(np.vstack([a, b])) / n) @ grad)
    assert lift == pytest.approx(r - 1, abs=1e-12)
    assert low == pytest.approx(r - 1 - 1.959963984540054 * se, abs=1e-12)
    assert high == pytest.approx(r - 1 + 1.959963984540054 * se, abs=1e-12)
    # coverage sanity: the interval of a large paired sample contains a bootstrap's centre
    idx = rng.integers(0, n, size=(2000, n))
    boot = b[idx].mean(axis=1) / a[idx].mean(axis=1) - 1
    assert low < np.median(boot) < high
    assert all(math.isnan(v) for v in stats.lift_ci([0.0, 0.0], [1.0, 2.0]))


@pytest.mark.parametrize("n, alpha", [(30, 0.05), (200, 0.01), (2400, 0.05)])
def test_minimum_detectable_effect_matches_statsmodels(n, alpha):
    from statsmodels.stats.power import TTestPower

    rng = np.random.default_rng(n)
    d = rng.normal(0.02, 0.3, n)
    effect = TTestPower().solve_power(nobs=n, alpha=alpha, power=0.8, alternative="two-sided")
    assert stats.minimum_detectable_effect(d, alpha=alpha) == pytest.approx(effect * d.std(ddof=1), rel=1e-4)  # statsmodels solves to ~1e-6
    assert math.isnan(stats.minimum_detectable_effect([0.1]))
    assert stats.minimum_detectable_effect([0.1, 0.1, 0.1]) == 0.0


def test_randomization_normal_approximation_tracks_the_sign_flip_distribution():
    rng = np.random.default_rng(21)
    # enumeration is exact at 18 users; the normal approximation is close already there
    d = rng.normal(0.12, 0.5, 18)
    exact = _exact_randomization(d)
    approx = stats.randomization_test(np.zeros(18), d, n_resamples=0)[1]
    assert 0.05 < exact < 0.95 and abs(approx - exact) < 0.03
    # at 4,000 users it agrees with 100,000 sign flips within their sampling error
    a = rng.random(4000)
    b = a + rng.normal(0.006, 0.3, 4000)
    mc = stats.randomization_test(a, b, n_resamples=100_000, seed=3)[1]
    approx = stats.randomization_test(a, b, n_resamples=0)[1]
    assert 0.05 < mc < 0.95
    assert abs(approx - mc) < 4 * math.sqrt(mc * (1 - mc) / 100_000) + 0.002
    # and through compare: no draws, the same p as the formula on the paired differences
    diff = b - a
    formula = math.erfc(abs(diff.sum()) / math.sqrt(2 * (diff ** 2).sum()))
    assert stats.paired_comparison(a, b, test="randomization", n_permutations=0).p_value == pytest.approx(formula)


def test_bootstrap_ci_many_is_each_vectors_own_bootstrap_in_one_pass():
    from test_compare import plain_bootstrap

    rng = np.random.default_rng(5)
    vectors = [rng.random(300), rng.exponential(1.0, 300), (rng.random(300) < 0.2).astype(float),
               np.r_[rng.random(120), np.nan, np.inf], np.full(50, 0.5), np.array([]), np.array([np.nan])]
    got = stats.bootstrap_ci_many(vectors, n_resamples=500, seed=2)
    for v, (low, high) in zip(vectors[:4], got[:4]):
        assert (low, high) == pytest.approx(plain_bootstrap(v, n_resamples=500, seed=2), abs=1e-12)
        # the same interval whatever else shares the pass
        assert (low, high) == pytest.approx(stats.bootstrap_ci_many([v], n_resamples=500, seed=2)[0], abs=1e-12)
    assert got[4] == (0.5, 0.5)
    assert all(math.isnan(b) for b in got[5]) and all(math.isnan(b) for b in got[6])
    assert stats.bootstrap_ci_many([]) == []


def test_paired_groups_give_each_group_what_scipy_and_plain_formulas_give_on_its_pairs():
    """Many groups at once (empty, one pair, every difference zero, one constant difference, a baseline
    mean of 0, a metric where lower is better, ordinary ones, codes out of order, pairs in no group),
    each group checked on its own pairs against scipy.stats and formulas written out here."""
    from statsmodels.stats.power import TTestPower

    rng = np.random.default_rng(11)
    n_groups = 8
    sizes = {0: 0, 1: 1, 2: 12, 3: 9, 4: 6, 5: 40, 6: 25, 7: 3}
    a_parts, b_parts, code_parts = [], [], []
    for g, size in sizes.items():
        a = rng.random(size).round(2)
        b = {2: a.copy(), 3: a + 0.25, 4: np.zeros(size) + rng.random(size)}.get(g, np.clip(a + rng.normal(0.03, 0.2, size), 0, 1))
        if g == 4:
            a = np.zeros(size)  # baseline mean 0: no lift
        a_parts.append(a)
        b_parts.append(b)
        code_parts.append(np.full(size, g))
    a_parts.append(rng.random(5))  # pairs in no group
    b_parts.append(rng.random(5))
    code_parts.append(np.full(5, -1))
    order = rng.permutation(sum(len(x) for x in a_parts))  # groups interleaved
    a_all, b_all, codes = (np.concatenate(x)[order] for x in (a_parts, b_parts, code_parts))
    for higher in (True, False):
        groups = stats.PairedGroups.by_codes(a_all, b_all, codes, n_groups)
        table = groups.table(["t", "wilcoxon", "randomization"], alpha=0.05, confidence=0.9, n_permutations=4096,
                             higher_is_better=higher)
        for g in range(n_groups):
            pick = codes == g
            a, b = a_all[pick], b_all[pick]  # the group's pairs in their original order
            d = [y - x for x, y in zip(a, b)]
            n = len(d)
            assert table["n"][g] == n
            s = 1 if higher else -1
            wins, losses = sum(s * x > 1e-9 for x in d), sum(s * x < -1e-9 for x in d)
            assert (table["wins"][g], table["ties"][g], table["losses"][g]) == (wins, n - wins - losses, losses)
            if n == 0:
                assert all(math.isnan(table[k][g]) for k in ("diff", "p_t", "effect_size", "lift", "mde"))
                continue
            mean_d = sum(d) / n
            assert table["diff"][g] == pytest.approx(mean_d, abs=1e-12)
            if n < 2:
                assert all(math.isnan(table[k][g]) for k in ("p_t", "statistic_t", "lift", "mde"))
                continue
            sd = math.sqrt(sum((x - mean_d) ** 2 for x in d) / (n - 1))
            if all(x == 0 for x in d):
                assert (table["statistic_t"][g], table["p_t"][g], table["effect_size"][g]) == (0.0, 1.0, 0.0)
                assert (table["p_wilcoxon"][g], table["p_randomization"][g], table["mde"][g]) == (1.0, 1.0, 0.0)
                continue
            ref = sst.ttest_rel(b, a)
            assert table["statistic_t"][g] == pytest.approx(ref.statistic, rel=1e-9)
            assert table["p_t"][g] == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-300)
            exact = np.round(d, 9)  # the differences without float noise (a + 0.25 - a is not 0.25 exactly)
            assert table["p_wilcoxon"][g] == pytest.approx(sst.wilcoxon(exact, zero_method="wilcox").pvalue, rel=1e-9)
            if sd < 1e-12:  # one constant difference: sd is 0 up to rounding
                continue
            assert table["effect_size"][g] == pytest.approx(mean_d / sd, rel=1e-9)
            power = TTestPower().solve_power(nobs=n, alpha=0.05, power=0.8, alternative="two-sided")
            assert table["mde"][g] == pytest.approx(power * sd, rel=1e-4)
            ma, mb = sum(a) / n, sum(b) / n
            if ma == 0:
                assert math.isnan(table["lift"][g])
                continue
            r = mb / ma
            cov = np.cov(np.vstack([a, b]))
            half = sst.norm.ppf(0.95) * math.sqrt((cov[1, 1] - 2 * r * cov[0, 1] + r * r * cov[0, 0]) / (n * ma * ma))
            assert (table["lift"][g], table["lift_ci_low"][g], table["lift_ci_high"][g]) == pytest.approx(
                (r - 1, r - 1 - half, r - 1 + half), rel=1e-9)
            if n <= 12:  # exact sign-flip enumeration (2^n <= 4096)
                hits = sum(abs(sum(sg * x for sg, x in zip(signs, d))) >= abs(sum(d)) - 1e-9 * sum(map(abs, d))
                           for signs in itertools.product((1, -1), repeat=n))
                assert table["p_randomization"][g] == pytest.approx(hits / 2 ** n, rel=1e-12)


def test_one_group_is_the_scalar_functions():
    """paired_comparison, paired_t_test, cohens_d_paired, win_tie_loss, lift_ci on one pair of samples
    agree with scipy and with each other (they are the one-group case of PairedGroups)."""
    rng = np.random.default_rng(3)
    a = rng.random(30)
    b = np.clip(a + rng.normal(0.04, 0.1, 30), 0, 1)
    r = stats.paired_comparison(a, b, n_resamples=0)
    ref = sst.ttest_rel(b, a)
    assert (r.statistic, r.p_value) == pytest.approx((ref.statistic, ref.pvalue), rel=1e-9)
    assert r.p_wilcoxon == pytest.approx(sst.wilcoxon(b - a).pvalue, rel=1e-9)
    assert (r.wins, r.ties, r.losses) == stats.win_tie_loss(a, b)
    assert r.effect_size == pytest.approx((b - a).mean() / (b - a).std(ddof=1), rel=1e-9)
    with pytest.raises(MetricsError, match="same length"):
        stats.PairedGroups.one([1.0, 2.0], [1.0])
