import math

import numpy as np
import pytest
import scipy.stats

from datasets.userlevel import (
    UserSamples,
    extreme_counts,
    geometric_counts,
    user_samples,
    userlevel_collection,
    zipf_counts,
)

# Statistical checks use fixed seeds and 6 standard errors (a correct generator fails one with
# probability about 2e-9); distribution checks use a KS test at level 1e-4.
SIGMAS = 6.0
KS_LEVEL = 1e-4
U = 65.0


def draw(counts=(3, 1, 2), *, runs=4, d=1, bound=U, distribution="uniform", seed=0):
    return user_samples(counts, runs=runs, d=d, bound=bound, distribution=distribution,
                        rng=np.random.default_rng(seed))


def assert_mean_and_variance(values, *, mean, variance, fourth_central):
    """Sample mean within SIGMAS sqrt(var / N) and sample variance within SIGMAS
    sqrt((mu_4 - var^2) / N) of the exact values."""
    values = np.ravel(values)
    size = values.size
    assert abs(values.mean() - mean) <= SIGMAS * math.sqrt(variance / size), (values.mean(), mean)
    assert abs(values.var(ddof=1) - variance) <= SIGMAS * math.sqrt((fourth_central - variance**2) / size), (
        values.var(ddof=1), variance)


# --- counts -------------------------------------------------------------------------------


def test_geometric_collection_of_the_paper_has_127_users_and_448_samples():
    counts = geometric_counts(M=6)
    assert counts.dtype == np.int64
    assert counts.size == 127 and counts.sum() == 448
    values, users = np.unique(counts, return_counts=True)
    np.testing.assert_array_equal(values, [1, 2, 4, 8, 16, 32, 64])
    np.testing.assert_array_equal(users, [64, 32, 16, 8, 4, 2, 1])  # 2^i users with 2^(6-i) samples
    assert np.all(np.diff(counts) <= 0)  # largest first


@pytest.mark.parametrize(("M", "expected"), [(0, [1]), (1, [2, 1, 1]), (2, [4, 2, 2, 1, 1, 1, 1])])
def test_small_geometric_collections_match_the_definition_by_hand(M, expected):
    np.testing.assert_array_equal(geometric_counts(M=M), expected)


def test_extreme_collection_of_the_paper_has_100_single_sample_users_and_one_with_10():
    counts = extreme_counts()
    assert counts.dtype == np.int64 and counts.size == 101 and counts.sum() == 110
    assert counts[0] == 10 and np.all(counts[1:] == 1)


def test_zipf_counts_are_non_increasing_from_max_count_down_to_one():
    counts = zipf_counts(L=500, exponent=1.0, max_count=64)
    assert counts.dtype == np.int64 and counts.size == 500
    assert counts[0] == 64 and counts.min() == 1 and counts[-1] == 1
    assert np.all(np.diff(counts) <= 0)
    # m_l = round(64 / l), halves up: 64/3 = 21.3 -> 21, 64/5 = 12.8 -> 13, 64/128 = 0.5 -> 1
    np.testing.assert_array_equal(counts[[0, 1, 2, 4, 9]], [64, 32, 21, 13, 6])
    np.testing.assert_array_equal(zipf_counts(L=500, exponent=1.0, max_count=64), counts)


def test_zipf_counts_round_halves_up():
    # 5 / 2 = 2.5 -> 3 (round half to even would give 2), 5 / 10 = 0.5 -> 1
    np.testing.assert_array_equal(zipf_counts(L=10, exponent=1.0, max_count=5), [5, 3, 2, 1, 1, 1, 1, 1, 1, 1])


def test_zipf_counts_with_exponent_zero_give_every_user_max_count():
    np.testing.assert_array_equal(zipf_counts(L=4, exponent=0.0, max_count=7), [7, 7, 7, 7])


# --- layout -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("d", "distribution"), [(1, "uniform"), (1, "projected_gaussian"), (2, "simplex"), (5, "simplex")]
)
def test_samples_have_shape_runs_by_n_and_float64(d, distribution):
    data = draw([3, 1, 2], runs=7, d=d, distribution=distribution)
    expected = (7, 6) if d == 1 else (7, 6, d)
    assert data.samples.shape == expected and data.samples.dtype == np.float64
    assert data.d == d and data.runs == 7 and data.n == 6 and data.bound == U


def test_users_are_sorted_int64_and_their_bincount_is_the_counts():
    counts = [3, 1, 2, 5]
    data = draw(counts)
    assert data.users.dtype == np.int64
    np.testing.assert_array_equal(data.users, [0, 0, 0, 1, 2, 2, 3, 3, 3, 3, 3])
    np.testing.assert_array_equal(data.counts, counts)


def test_user_sums_add_each_users_samples_per_run():
    for d in (1, 3):
        data = draw([3, 1, 2], runs=5, d=d, distribution="uniform" if d == 1 else "simplex")
        sums = data.user_sums()
        manual = np.stack([data.samples[:, data.users == user].sum(axis=1) for user in range(3)], axis=1)
        np.testing.assert_allclose(sums, manual, rtol=1e-15)


def test_collection_uses_the_papers_counts_and_default_distributions():
    rng = np.random.default_rng(0)
    geometric = userlevel_collection(collection="geometric", runs=2, rng=rng)
    extreme = userlevel_collection(collection="extreme", runs=2, rng=rng)
    zipf = userlevel_collection(collection="zipf", runs=2, L=30, exponent=1.5, max_count=20, rng=rng)
    vector = userlevel_collection(collection="extreme", runs=2, d=3, rng=rng)
    np.testing.assert_array_equal(geometric.counts, geometric_counts(M=6))
    np.testing.assert_array_equal(extreme.counts, extreme_counts(L=101, m_star=10))
    np.testing.assert_array_equal(zipf.counts, zipf_counts(L=30, exponent=1.5, max_count=20))
    assert vector.samples.shape == (2, 110, 3) and np.all(vector.samples.sum(axis=2) <= U * (1 + 1e-12))


def test_collection_defaults_match_a_direct_draw_from_the_same_seed():
    pairs = [
        (dict(collection="geometric"), (geometric_counts(M=6), "uniform")),
        (dict(collection="extreme"), (extreme_counts(L=101, m_star=10), "projected_gaussian")),
        (dict(collection="geometric", d=4), (geometric_counts(M=6), "simplex")),
    ]
    for kwargs, (counts, distribution) in pairs:
        d = kwargs.get("d", 1)
        got = userlevel_collection(runs=3, rng=np.random.default_rng(9), **kwargs)
        direct = user_samples(counts, runs=3, d=d, distribution=distribution, rng=np.random.default_rng(9))
        assert got.samples.tobytes() == direct.samples.tobytes()


# --- determinism and independence -----------------------------------------------------------


@pytest.mark.parametrize(("d", "distribution"), [(1, "uniform"), (1, "projected_gaussian"), (4, "simplex")])
def test_same_seed_gives_identical_bytes_and_another_seed_different_ones(d, distribution):
    first = draw(geometric_counts(M=3), runs=50, d=d, distribution=distribution, seed=11)
    second = draw(geometric_counts(M=3), runs=50, d=d, distribution=distribution, seed=11)
    other = draw(geometric_counts(M=3), runs=50, d=d, distribution=distribution, seed=12)
    assert first.samples.tobytes() == second.samples.tobytes()
    assert not np.array_equal(first.samples, other.samples)


@pytest.mark.parametrize(("d", "distribution"), [(1, "uniform"), (1, "projected_gaussian"), (4, "simplex")])
def test_runs_are_fresh_datasets_with_uncorrelated_means(d, distribution):
    data = draw(geometric_counts(M=2), runs=4000, d=d, distribution=distribution, seed=3)
    rows = data.samples.reshape(data.runs, -1)
    assert np.unique(rows, axis=0).shape[0] == data.runs  # no repeated run
    assert np.unique(rows).size == rows.size  # no value repeated across samples or runs
    means = rows.mean(axis=1)
    lag_one = np.corrcoef(means[1:], means[:-1])[0, 1]
    assert abs(lag_one) <= SIGMAS / math.sqrt(data.runs - 1)


def test_the_input_counts_are_not_modified():
    counts = np.array([2, 1, 1])
    draw(counts)
    np.testing.assert_array_equal(counts, [2, 1, 1])


# --- distributions ---------------------------------------------------------------------------


def test_uniform_samples_lie_in_zero_to_bound_with_the_uniform_mean_and_variance():
    data = draw(geometric_counts(M=6), runs=400, distribution="uniform", seed=1)
    x = data.samples
    assert x.min() > 0.0 and x.max() <= U
    assert_mean_and_variance(x, mean=U / 2, variance=U**2 / 12, fourth_central=U**4 / 80)
    assert scipy.stats.kstest(x.ravel()[:50_000], scipy.stats.uniform(0, U).cdf).pvalue > KS_LEVEL


def test_uniform_samples_stay_in_zero_to_bound_even_for_a_tiny_bound():
    # U (1 - V) with V in [0, 1): 1 - V >= 2^-53, so the product stays > 0 (here subnormal).
    x = draw(runs=100_000, bound=1e-300, seed=2).samples
    assert x.min() > 0.0 and x.max() <= 1e-300


class ExtremeUniforms(np.random.Generator):
    """A generator whose uniforms on [0, 1) alternate between their extremes 0 and 1 - 2^-53."""

    def random(self, size=None, dtype=np.float64, out=None):
        values = np.zeros(size)
        values.reshape(-1)[1::2] = np.nextafter(1.0, 0.0)
        return values


def test_uniform_samples_map_the_extreme_uniforms_to_the_bound_and_just_above_zero():
    x = user_samples([2], runs=1, bound=U, distribution="uniform", rng=ExtremeUniforms(np.random.PCG64(0))).samples
    assert x[0, 0] == U and 0.0 < x[0, 1] <= U * 2.0**-52


def truncated_normal(bound):
    """N(U/2, variance U/4) truncated to (0, U]."""
    mean, std = bound / 2, math.sqrt(bound / 4)
    return scipy.stats.truncnorm((0 - mean) / std, (bound - mean) / std, loc=mean, scale=std)


@pytest.mark.parametrize("bound", [U, 1.0, 0.2])  # acceptance 1 - 6e-16, 0.68, 0.35
def test_projected_gaussian_is_the_truncated_normal_on_zero_to_bound(bound):
    data = draw(geometric_counts(M=6), runs=300, bound=bound, distribution="projected_gaussian", seed=4)
    x = data.samples
    assert x.min() > 0.0 and x.max() <= bound
    law = truncated_normal(bound)
    mean, variance, _, excess_kurtosis = (float(v) for v in law.stats(moments="mvsk"))
    assert_mean_and_variance(x, mean=mean, variance=variance, fourth_central=(excess_kurtosis + 3) * variance**2)
    assert scipy.stats.kstest(x.ravel()[:50_000], law.cdf).pvalue > KS_LEVEL


def test_projected_gaussian_for_the_paper_has_mean_32_5_and_variance_16_25():
    law = truncated_normal(U)
    assert law.mean() == pytest.approx(32.5, rel=1e-12) and law.var() == pytest.approx(16.25, rel=1e-12)


@pytest.mark.parametrize("d", [2, 3, 8])
def test_simplex_samples_are_nonnegative_inside_the_l1_ball_and_uniform_on_the_simplex(d):
    data = draw(geometric_counts(M=4), runs=200, d=d, distribution="simplex", seed=5)
    x = data.samples.reshape(-1, d)
    norms = x.sum(axis=1)
    assert x.min() >= 0.0 and norms.max() <= U * (1 + 1e-14)
    # Uniform on {x >= 0, sum x <= U}: P(||x||_1 <= s) = (s / U)^d, and each coordinate / U is Beta(1, d).
    assert scipy.stats.kstest(norms[:20_000], lambda s: (s / U) ** d).pvalue > KS_LEVEL
    assert scipy.stats.kstest(x[:20_000, 0] / U, scipy.stats.beta(1, d).cdf).pvalue > KS_LEVEL
    mean, variance, _, excess_kurtosis = (float(v) for v in scipy.stats.beta(1, d, scale=U).stats(moments="mvsk"))
    assert mean == pytest.approx(U / (d + 1))
    for j in range(d):
        fourth_central = (excess_kurtosis + 3) * variance**2
        assert_mean_and_variance(x[:, j], mean=mean, variance=variance, fourth_central=fourth_central)


def test_simplex_coordinates_are_exchangeable_and_negatively_correlated():
    d = 3
    x = draw(geometric_counts(M=4), runs=300, d=d, distribution="simplex", seed=6).samples.reshape(-1, d)
    # Dirichlet(1, 1, 1, 1): corr(x_i, x_j) = -1 / d for i != j among the first d of d + 1.
    correlation = np.corrcoef(x.T)
    off = correlation[~np.eye(d, dtype=bool)]
    assert np.all(np.abs(off + 1 / d) <= SIGMAS / math.sqrt(x.shape[0]))


# --- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(runs=0), "runs=0"),
        (dict(runs=2.0), "runs=2.0"),
        (dict(runs=True), "runs=True"),
        (dict(d=0, distribution="simplex"), "d=0"),
        (dict(bound=0.0), "bound=0.0"),
        (dict(bound=-1), "bound=-1"),
        (dict(bound=math.inf), "bound=inf"),
        (dict(bound=math.nan), "bound=nan"),
        (dict(counts=[]), r"counts=\[\]"),
        (dict(counts=[2, 0, 1]), r"counts\[1\]=0"),
        (dict(counts=[1.5, 2]), r"counts=\[1.5, 2\]"),
        (dict(counts=[[1, 2]]), r"counts=\[\[1, 2\]\]"),
        (dict(distribution="normal"), "'uniform', 'projected_gaussian'.*distribution='normal'"),
        (dict(distribution="simplex"), "'uniform', 'projected_gaussian' for d=1.*distribution='simplex'"),
        (dict(d=3, distribution="uniform"), "'simplex' for d=3.*distribution='uniform'"),
        (dict(d=2, distribution="projected_gaussian"), "'simplex' for d=2.*distribution='projected_gaussian'"),
    ],
)
def test_bad_arguments_raise_one_value_error_naming_the_value(kwargs, message):
    arguments = dict(counts=[2, 1], runs=3, d=1, bound=U, distribution="uniform") | kwargs
    counts = arguments.pop("counts")
    with pytest.raises(ValueError, match=message):
        user_samples(counts, rng=np.random.default_rng(0), **arguments)


def test_a_non_generator_rng_is_refused():
    with pytest.raises(TypeError, match="rng"):
        user_samples([1], runs=1, distribution="uniform", rng=0)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: geometric_counts(M=-1), "M=-1"),
        (lambda: geometric_counts(M=1.0), "M=1.0"),
        (lambda: extreme_counts(L=0), "L=0"),
        (lambda: extreme_counts(m_star=0), "m_star=0"),
        (lambda: zipf_counts(L=0, exponent=1.0, max_count=5), "L=0"),
        (lambda: zipf_counts(L=5, exponent=-0.5, max_count=5), "exponent=-0.5"),
        (lambda: zipf_counts(L=5, exponent=math.nan, max_count=5), "exponent=nan"),
        (lambda: zipf_counts(L=5, exponent=1.0, max_count=0), "max_count=0"),
        (lambda: userlevel_collection(collection="power", runs=1, rng=np.random.default_rng(0)),
         "'geometric', 'extreme', 'zipf'.*collection='power'"),
        (lambda: userlevel_collection(collection="geometric", runs=1, d=2, distribution="uniform",
                                      rng=np.random.default_rng(0)), "'simplex'.*distribution='uniform'"),
        (lambda: userlevel_collection(collection="extreme", runs=1, L=0, rng=np.random.default_rng(0)), "L=0"),
    ],
)
def test_bad_collection_parameters_raise_one_value_error_naming_the_value(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(users=np.array([0, 2, 2])), "users"),
        (dict(users=np.array([1, 1, 2])), "users"),
        (dict(users=np.array([0, 1, 0])), "users"),
        (dict(users=np.array([0, 1, 1], dtype=np.int32)), "int64"),
        (dict(samples=np.ones((2, 4))), r"shape \(runs, 3\)"),
        (dict(samples=np.ones((2, 3, 1))), "d >= 2"),
        (dict(samples=np.ones((2, 3), dtype=np.float32)), "float64"),
        (dict(bound=0.0), "bound=0.0"),
    ],
)
def test_user_samples_refuses_inconsistent_parts(kwargs, message):
    parts = dict(samples=np.ones((2, 3)), users=np.array([0, 1, 1]), bound=U) | kwargs
    with pytest.raises(ValueError, match=message):
        UserSamples(**parts)
