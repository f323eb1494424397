import math

import numpy as np
import pytest
import scipy.sparse

from datasets.binary import (
    bernoulli_rows,
    binary_synthetic,
    draw_bernoulli_rows,
    kosarak_shaped,
    pos_shaped,
    zipf_popularity,
)

# Statistical checks use fixed seeds and 6 standard deviations of the exact distribution: a
# correct generator fails one with probability about 2e-9.
SIGMAS = 6.0

SAMPLERS = {
    "bernoulli_rows": lambda rng: bernoulli_rows([0.0, 0.02, 0.5, 1.0, 1e-3], n=3000, rng=rng),
    "binary_synthetic": lambda rng: binary_synthetic(n=500, d=64, ratio=0.25, rng=rng).x,
    "kosarak_shaped": lambda rng: kosarak_shaped(n=300, rng=rng).x,
    "pos_shaped": lambda rng: pos_shaped(n=2000, rng=rng).x,
}


def column_counts(x) -> np.ndarray:
    return np.bincount(x.indices, minlength=x.shape[1])


def assert_counts_are_binomial(counts: np.ndarray, q: np.ndarray, n: int) -> None:
    """Each count within SIGMAS binomial standard deviations of n q (exact for q = 0 or 1)."""
    mean = n * q
    slack = SIGMAS * np.sqrt(mean * (1.0 - q))
    bad = np.flatnonzero(np.abs(counts - mean) > slack)
    assert bad.size == 0, f"columns {bad}: counts {counts[bad]}, expected {mean[bad]} +- {slack[bad]}"


def chi_square_is_plausible(counts: np.ndarray, q: np.ndarray, n: int) -> bool:
    """sum (count - n q)^2 / (n q (1 - q)) over the columns is about chi-square with one degree
    of freedom per column (mean k, variance 2k); 0 < q < 1."""
    statistic = float(np.sum((counts - n * q) ** 2 / (n * q * (1.0 - q))))
    return abs(statistic - q.size) <= SIGMAS * math.sqrt(2.0 * q.size)


@pytest.mark.parametrize(("n", "q"), [(1, [0.5]), (7, [0.0, 1.0, 0.3]), (1000, np.linspace(0.0, 1.0, 33))])
def test_bernoulli_rows_are_a_canonical_csr_matrix_of_float64_ones_with_int32_indices(n, q):
    x = bernoulli_rows(q, n=n, rng=np.random.default_rng(0))
    assert isinstance(x, scipy.sparse.csr_matrix)
    assert x.shape == (n, len(q))
    assert x.dtype == np.float64 and np.all(x.data == 1.0)
    assert x.indices.dtype == np.int32 and x.indptr.dtype == np.int32
    assert x.has_canonical_format
    # Checked directly too, not only through scipy's flag: column indices strictly increase
    # within every row (sorted, no duplicates).
    row_of_entry = np.repeat(np.arange(n), np.diff(x.indptr))
    same_row = row_of_entry[1:] == row_of_entry[:-1]
    assert np.all(np.diff(x.indices)[same_row] > 0)


def test_probability_zero_gives_an_empty_column_and_probability_one_a_full_column():
    x = bernoulli_rows([0.0, 1.0, 0.0, 1.0], n=500, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(column_counts(x), [0, 500, 0, 500])


def test_all_zero_probabilities_give_an_empty_matrix_of_the_right_shape():
    x = bernoulli_rows(np.zeros(5), n=10, rng=np.random.default_rng(1))
    assert x.shape == (10, 5) and x.nnz == 0


@pytest.mark.parametrize("sample", SAMPLERS.values(), ids=SAMPLERS.keys())
def test_same_seed_gives_identical_matrix_bytes(sample):
    first = sample(np.random.default_rng(42))
    second = sample(np.random.default_rng(42))
    for part in ("data", "indices", "indptr"):
        assert getattr(first, part).tobytes() == getattr(second, part).tobytes()


@pytest.mark.parametrize("sample", SAMPLERS.values(), ids=SAMPLERS.keys())
def test_different_seeds_give_different_matrices(sample):
    first = sample(np.random.default_rng(1))
    second = sample(np.random.default_rng(2))
    assert (first != second).nnz > 0


def test_column_counts_are_binomial_for_probabilities_from_tiny_to_one():
    q = np.array([0.0, 1e-4, 1e-3, 0.01, 0.1, 0.3, 0.5, 0.9, 0.999, 1.0])
    n = 400_000  # n q = 40 for q = 1e-4
    x = bernoulli_rows(q, n=n, rng=np.random.default_rng(3))
    assert_counts_are_binomial(column_counts(x), q, n)


def test_column_counts_over_many_columns_have_binomial_spread():
    q = np.linspace(0.001, 0.999, 400)
    n = 3000
    x = bernoulli_rows(q, n=n, rng=np.random.default_rng(4))
    assert chi_square_is_plausible(column_counts(x), q, n)


def test_ones_per_row_have_the_poisson_binomial_mean_and_variance():
    """Row sums of independent columns: mean sum q, variance sum q (1 - q); the sample
    variance's own variance is (kappa_4 + 2 kappa_2^2) / n to first order."""
    q = np.random.default_rng(5).uniform(0.0, 0.6, size=200)
    n = 20_000
    per_row = np.diff(bernoulli_rows(q, n=n, rng=np.random.default_rng(6)).indptr)
    kappa2 = np.sum(q * (1 - q))
    kappa4 = np.sum(q * (1 - q) * (1 - 6 * q * (1 - q)))
    assert abs(per_row.mean() - q.sum()) <= SIGMAS * math.sqrt(kappa2 / n)
    assert abs(per_row.var(ddof=1) - kappa2) <= SIGMAS * math.sqrt((kappa4 + 2 * kappa2**2) / n)


def test_neighbouring_rows_of_a_column_are_independent():
    """Pairs of successive rows both 1: mean (n - 1) q^2; the pairs overlap, so the variance is
    (n - 1)(q^2 - q^4) + 2 (n - 2)(q^3 - q^4)."""
    q, n = 0.3, 100_000
    column = np.zeros(n, dtype=bool)
    column[bernoulli_rows([q], n=n, rng=np.random.default_rng(7)).tocsc().indices] = True
    pairs = np.count_nonzero(column[1:] & column[:-1])
    variance = (n - 1) * (q**2 - q**4) + 2 * (n - 2) * (q**3 - q**4)
    assert abs(pairs - (n - 1) * q**2) <= SIGMAS * math.sqrt(variance)


def test_columns_whose_first_gaps_fall_short_draw_more_and_stay_binomial():
    """One gap per column in the first batch: every column with q > 0 (bar the rare one whose
    single gap passes the last row) needs further draws."""
    q = np.concatenate([np.linspace(0.01, 0.99, 200), [0.0, 1.0, 1e-3]])
    n = 3000
    x = draw_bernoulli_rows(q, n=n, rng=np.random.default_rng(8), gap_counts=np.ones(q.size, dtype=np.int64))
    assert x.has_canonical_format and x.indices.dtype == np.int32
    counts = column_counts(x)
    assert_counts_are_binomial(counts, q, n)
    assert chi_square_is_plausible(counts[:200], q[:200], n)


def test_columns_whose_first_gaps_fall_short_are_reproducible():
    def draw():
        q = np.array([0.2, 0.7])
        return draw_bernoulli_rows(q, n=1000, rng=np.random.default_rng(9), gap_counts=np.array([1, 2]))

    first, second = draw(), draw()
    assert first.indices.tobytes() == second.indices.tobytes()
    assert first.indptr.tobytes() == second.indptr.tobytes()


@pytest.mark.parametrize(
    ("ratio", "d", "leading"),
    [(0.0, 64, 0), (0.25, 64, 16), (1.0, 64, 64), (0.3, 16, 5), (0.07, 100, 7)],
    ids=["none", "quarter", "all", "rounded-up", "product-rounding-error"],
)
def test_binary_synthetic_puts_high_on_exactly_the_first_ceil_ratio_d_columns(ratio, d, leading):
    sample = binary_synthetic(n=3, d=d, ratio=ratio, rng=np.random.default_rng(0), high=1.0, low=0.0)
    expected = np.r_[np.ones(leading), np.zeros(d - leading)]
    np.testing.assert_array_equal(sample.true_mean, expected)
    np.testing.assert_array_equal(sample.x.toarray(), np.tile(expected, (3, 1)))


def test_binary_synthetic_defaults_to_one_half_and_one_percent():
    sample = binary_synthetic(n=3, d=8, ratio=0.5, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(sample.true_mean, [0.5] * 4 + [0.01] * 4)


def test_binary_synthetic_true_std_is_that_of_a_bernoulli():
    sample = binary_synthetic(n=3, d=8, ratio=0.5, rng=np.random.default_rng(0), high=0.2, low=0.05)
    np.testing.assert_allclose(sample.true_std, np.sqrt(sample.true_mean * (1 - sample.true_mean)))


@pytest.mark.parametrize(("d", "padded"), [(1, 1), (3, 4), (256, 256), (1000, 1024), (2048, 2048)])
def test_binary_universe_is_zero_to_root_of_d_rounded_up_to_a_power_of_two(d, padded):
    sample = binary_synthetic(n=2, d=d, ratio=0.5, rng=np.random.default_rng(0))
    assert sample.bounds == (0.0, math.sqrt(padded))


def test_binary_synthetic_column_counts_are_binomial():
    n = 4096
    sample = binary_synthetic(n=n, d=256, ratio=0.25, rng=np.random.default_rng(10))
    assert chi_square_is_plausible(column_counts(sample.x), sample.true_mean, n)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"d": 27_983, "items_per_row": 55.6},
        {"d": 1_657, "items_per_row": 6.5},
        {"d": 100, "items_per_row": 30.0, "exponent": 2.0},
        {"d": 50, "items_per_row": 5.0, "exponent": 0.0},
        {"d": 10, "items_per_row": 3.0, "max_probability": 0.3},
    ],
)
def test_zipf_popularity_sums_to_items_per_row_non_increasing_and_within_the_cap(kwargs):
    q = zipf_popularity(**kwargs)
    cap = kwargs.get("max_probability", 0.5)
    assert q.shape == (kwargs["d"],)
    assert q.sum() == pytest.approx(kwargs["items_per_row"], rel=1e-12)
    assert np.all(np.diff(q) <= 0)
    assert np.all((q > 0) & (q <= cap))


def test_zipf_popularity_without_a_binding_cap_is_proportional_to_the_power_law():
    q = zipf_popularity(d=1000, items_per_row=2.0, exponent=1.2)
    weights = np.arange(1, 1001) ** -1.2
    np.testing.assert_allclose(q, 2.0 * weights / weights.sum(), rtol=1e-12)


def test_zipf_popularity_caps_the_top_items_and_scales_up_the_rest_when_the_cap_binds():
    q = zipf_popularity(d=27_983, items_per_row=55.6, exponent=1.0, max_probability=0.5)
    capped = np.count_nonzero(q == 0.5)
    assert capped >= 2
    assert np.all(q[:capped] == 0.5)
    scaled = q[capped:] * np.arange(capped + 1, 27_984)  # q_j (j + 1): constant past the cap
    np.testing.assert_allclose(scaled, scaled[0], rtol=1e-12)
    assert q[capped] < 0.5 <= scaled[0] / capped  # item capped - 1 would reach the cap uncapped


def test_zipf_popularity_at_the_limit_puts_every_item_at_the_cap():
    np.testing.assert_array_equal(zipf_popularity(d=10, items_per_row=5.0), np.full(10, 0.5))


def test_zipf_popularity_names_an_exponent_so_large_that_the_needed_weights_underflow():
    with pytest.raises(ValueError, match=r"^exponent=200 is too large for d=100: .* got items_per_row=30$"):
        zipf_popularity(d=100, items_per_row=30, exponent=200)


# The paper's n, D and items per row (PLAN Section 6), and D rounded up to a power of two.
SHAPED = {
    "kosarak_shaped": (kosarak_shaped, 75_462, 27_983, 55.6, 32_768),
    "pos_shaped": (pos_shaped, 515_596, 1_657, 6.5, 2_048),
}
SHAPED_ARGS = ("make", "paper_n", "d", "items_per_row", "padded")


@pytest.mark.parametrize(SHAPED_ARGS, SHAPED.values(), ids=SHAPED.keys())
def test_shaped_stand_ins_have_the_papers_width_and_zipf_truth(make, paper_n, d, items_per_row, padded):
    sample = make(n=2000, rng=np.random.default_rng(11))
    assert sample.x.shape == (2000, d)
    np.testing.assert_array_equal(sample.true_mean, zipf_popularity(d=d, items_per_row=items_per_row))
    np.testing.assert_allclose(sample.true_std, np.sqrt(sample.true_mean * (1 - sample.true_mean)))
    assert sample.bounds == (0.0, math.sqrt(padded))


@pytest.mark.parametrize(SHAPED_ARGS, SHAPED.values(), ids=SHAPED.keys())
def test_shaped_stand_ins_default_to_the_papers_shape_and_items_per_row(make, paper_n, d, items_per_row, padded):
    sample = make(rng=np.random.default_rng(12))
    assert sample.x.shape == (paper_n, d)
    n = paper_n
    variance_per_row = float(np.sum(sample.true_mean * (1 - sample.true_mean)))
    assert sample.x.nnz / n == pytest.approx(items_per_row, abs=SIGMAS * math.sqrt(variance_per_row / n))


def test_shaped_stand_ins_take_their_shape_and_popularity_from_the_arguments():
    sample = pos_shaped(n=5, d=40, items_per_row=4.0, exponent=0.5, max_probability=0.2, rng=np.random.default_rng(0))
    assert sample.x.shape == (5, 40)
    np.testing.assert_array_equal(
        sample.true_mean, zipf_popularity(d=40, items_per_row=4.0, exponent=0.5, max_probability=0.2)
    )


def test_shaped_stand_in_column_counts_are_binomial():
    n = 2000
    sample = pos_shaped(n=n, rng=np.random.default_rng(13))
    assert_counts_are_binomial(column_counts(sample.x), sample.true_mean, n)


NOT_A_PROBABILITY_ARRAY = r"q must be a non-empty 1-D array of probabilities, got an array of shape "
TOO_MANY_ITEMS = r"items_per_row must be at most d \* max_probability = 5\.0 \(every item at the cap\), "
BAD_ARGUMENTS = [
    (bernoulli_rows, {"q": [0.5, 1.5], "n": 2}, r"q must be in \[0, 1\], got q\[1\]=1\.5"),
    (bernoulli_rows, {"q": [math.nan], "n": 2}, r"q must be in \[0, 1\], got q\[0\]=nan"),
    (bernoulli_rows, {"q": [-0.1], "n": 2}, r"q must be in \[0, 1\], got q\[0\]=-0\.1"),
    (bernoulli_rows, {"q": [], "n": 2}, NOT_A_PROBABILITY_ARRAY + r"\(0,\)"),
    (bernoulli_rows, {"q": [[0.5]], "n": 2}, NOT_A_PROBABILITY_ARRAY + r"\(1, 1\)"),
    (bernoulli_rows, {"q": ["often"], "n": 2}, r"q must be a 1-D array of probabilities, got q=\['often'\]"),
    (bernoulli_rows, {"q": [0.5], "n": 0}, r"n must be a positive integer, got n=0"),
    (bernoulli_rows, {"q": [0.5], "n": 2.5}, r"n must be a positive integer, got n=2\.5"),
    (bernoulli_rows, {"q": [0.5], "n": True}, r"n must be a positive integer, got n=True"),
    (binary_synthetic, {"n": 2, "d": 0, "ratio": 0.5}, r"d must be a positive integer, got d=0"),
    (binary_synthetic, {"n": 2, "d": 4, "ratio": 1.5}, r"ratio must be in \[0, 1\], got ratio=1\.5"),
    (binary_synthetic, {"n": 2, "d": 4, "ratio": -0.25}, r"ratio must be in \[0, 1\], got ratio=-0\.25"),
    (binary_synthetic, {"n": 2, "d": 4, "ratio": math.nan}, r"ratio must be a finite real number, got ratio=nan"),
    (binary_synthetic, {"n": 2, "d": 4, "ratio": 0.5, "high": 2}, r"high must be in \[0, 1\], got high=2"),
    (
        binary_synthetic,
        {"n": 2, "d": 4, "ratio": 0.5, "low": "0.1"},
        r"low must be a finite real number, got low='0\.1'",
    ),
    (zipf_popularity, {"d": 0, "items_per_row": 1.0}, r"d must be a positive integer, got d=0"),
    (zipf_popularity, {"d": 4, "items_per_row": 0.0}, r"items_per_row must be > 0, got items_per_row=0\.0"),
    (
        zipf_popularity,
        {"d": 4, "items_per_row": math.inf},
        r"items_per_row must be a finite real number, got items_per_row=inf",
    ),
    (zipf_popularity, {"d": 4, "items_per_row": 1.0, "exponent": -1}, r"exponent must be >= 0, got exponent=-1"),
    (
        zipf_popularity,
        {"d": 4, "items_per_row": 1.0, "max_probability": 1.5},
        r"max_probability must be in \[0, 1\], got max_probability=1\.5",
    ),
    (zipf_popularity, {"d": 10, "items_per_row": 5.5}, TOO_MANY_ITEMS + r"got items_per_row=5\.5"),
    (kosarak_shaped, {"n": -3}, r"n must be a positive integer, got n=-3"),
    (kosarak_shaped, {"n": 5, "d": 10, "items_per_row": 6.0}, TOO_MANY_ITEMS + r"got items_per_row=6\.0"),
    (pos_shaped, {"n": 5, "exponent": math.nan}, r"exponent must be a finite real number, got exponent=nan"),
]


@pytest.mark.parametrize(
    ("make", "kwargs", "message"),
    BAD_ARGUMENTS,
    ids=[make.__name__ + "".join(f"-{key}={value}" for key, value in kw.items()) for make, kw, _ in BAD_ARGUMENTS],
)
def test_bad_arguments_raise_value_error_naming_the_value(make, kwargs, message):
    rng = {} if make is zipf_popularity else {"rng": np.random.default_rng(0)}
    with pytest.raises(ValueError, match=f"^{message}$"):
        make(**kwargs, **rng)


@pytest.mark.parametrize(
    "make",
    [
        lambda rng: bernoulli_rows([0.5], n=2, rng=rng),
        lambda rng: binary_synthetic(n=2, d=2, ratio=0.5, rng=rng),
        lambda rng: kosarak_shaped(n=2, rng=rng),
        lambda rng: pos_shaped(n=2, rng=rng),
    ],
    ids=["bernoulli_rows", "binary_synthetic", "kosarak_shaped", "pos_shaped"],
)
def test_a_seed_instead_of_a_generator_is_rejected(make):
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        make(0)
