"""The l1 projection onto the annulus A_{a,b} of the user-level paper (Section III-A, Figure 1;
mechanisms.userlevel.annulus_projection): norms land on a or b, directions are kept, points
inside stay, the result is a nearest point (checked by a linear program), a = 0 is
l1_projection, d = 1 is clipping, and bad arguments."""
import numpy as np
import pytest
import scipy.optimize

from mechanisms.userlevel import annulus_projection, l1_projection


def simplex_points(rng, shape, d, bound):
    """Points of {x >= 0, ||x||_1 <= bound}: a direction uniform on the face ||x||_1 = 1
    (Dirichlet(1, ..., 1)) times an l1 norm uniform on [0, bound] (so that every d has points of
    small and large norm)."""
    norms = rng.uniform(0.0, bound, size=shape)
    return rng.dirichlet(np.ones(d), size=shape) * np.asarray(norms)[..., None]


def l1_distance_to_annulus(point, lower, upper):
    """min ||point - z||_1 over z >= 0, lower <= sum z <= upper, as a linear program."""
    d = point.size
    # variables (z, t): minimise sum t with -t <= point - z <= t
    cost = np.r_[np.zeros(d), np.ones(d)]
    eye = np.eye(d)
    inequalities = np.block([[-eye, -eye], [eye, -eye], [np.ones((1, d)), np.zeros((1, d))],
                             [-np.ones((1, d)), np.zeros((1, d))]])
    right = np.r_[-point, point, upper, -lower]
    result = scipy.optimize.linprog(cost, A_ub=inequalities, b_ub=right, bounds=[(0, None)] * d + [(None, None)] * d,
                                    method="highs")
    assert result.status == 0
    return result.fun


@pytest.mark.parametrize("d", [2, 3, 6])
def test_norms_land_on_a_or_b_directions_are_kept_and_points_inside_stay(d):
    rng = np.random.default_rng(d)
    points = simplex_points(rng, 600, d, 5.0)
    lower = rng.uniform(0.0, 2.5, size=600)
    upper = lower + rng.uniform(0.0, 2.5, size=600)
    projected = annulus_projection(points, lower=lower, upper=upper)
    norms = points.sum(axis=1)
    above, below = norms > upper, norms < lower
    inside = ~above & ~below
    assert above.any() and below.any() and inside.any()
    assert np.array_equal(projected[inside], points[inside])
    assert np.allclose(projected[above].sum(axis=1), upper[above], rtol=1e-13)
    assert np.allclose(projected[below].sum(axis=1), lower[below], rtol=1e-13)
    moved = above | below
    # the same direction: a positive multiple of the point
    factor = projected[moved].sum(axis=1) / norms[moved]
    assert np.allclose(projected[moved], points[moved] * factor[:, None], rtol=1e-13, atol=1e-15)
    assert np.all(factor[above[moved]] < 1) and np.all(factor[below[moved]] > 1)
    assert np.all(projected >= 0)


@pytest.mark.parametrize("d", [2, 3, 5])
def test_the_projection_is_a_nearest_point_of_the_annulus_by_linear_programming(d):
    rng = np.random.default_rng(10 + d)
    for _ in range(40):
        point = simplex_points(rng, (), d, 4.0)
        lower, upper = np.sort(rng.uniform(0.0, 4.0, size=2))
        y = annulus_projection(point, lower=lower, upper=upper)
        assert lower * (1 - 1e-13) <= y.sum() <= upper * (1 + 1e-13)
        assert np.abs(point - y).sum() == pytest.approx(l1_distance_to_annulus(point, lower, upper), rel=1e-7, abs=1e-9)


def test_the_zero_point_goes_to_the_centre_of_the_inner_face_a_nearest_point():
    y = annulus_projection(np.zeros((2, 4)), lower=[0.8, 0.0], upper=[1.0, 1.0])
    assert np.array_equal(y, [[0.2, 0.2, 0.2, 0.2], [0.0, 0.0, 0.0, 0.0]])
    assert np.abs(y[0]).sum() == pytest.approx(l1_distance_to_annulus(np.zeros(4), 0.8, 1.0), rel=1e-9)


@pytest.mark.parametrize("d", [1, 2, 4])
def test_lower_zero_is_the_l1_projection(d):
    rng = np.random.default_rng(20 + d)
    points = simplex_points(rng, (3, 200), d, 3.0)
    radius = rng.uniform(0.0, 3.0, size=(3, 200))
    assert np.array_equal(annulus_projection(points, lower=0.0, upper=radius), l1_projection(points, radius))


def test_d_1_is_clipping_to_the_interval():
    """The paper's d = 1 case (Section III-C): the annulus is the interval [a, b]."""
    values = np.array([0.0, 0.1, 0.3, 0.5, 0.7, 0.95])
    projected = annulus_projection(values[:, None], lower=0.3, upper=0.7)[:, 0]
    assert np.allclose(projected, np.clip(values, 0.3, 0.7), rtol=1e-15, atol=0)


def test_figure1_points_of_the_user_level_paper():
    """p1 outside (norm 0.95 > b = 0.7) goes to norm b, p2 (norm 0.25 < a = 0.35) to norm a."""
    q = annulus_projection([[0.8, 0.15], [0.1, 0.15]], lower=0.35, upper=0.7)
    assert q == pytest.approx(np.array([[0.8, 0.15], [0.1, 0.15]]) * np.array([[0.7 / 0.95], [0.35 / 0.25]]), rel=1e-14)


def test_inputs_are_not_modified():
    points, lower = np.array([[2.0, 1.0], [0.1, 0.1]]), np.array([0.5, 0.5])
    annulus_projection(points, lower=lower, upper=1.0)
    assert points.tolist() == [[2.0, 1.0], [0.1, 0.1]] and lower.tolist() == [0.5, 0.5]


BAD = [
    ({"points": [1.0, 1.0], "lower": 0.8, "upper": 0.7}, r"finite 0 <= lower <= upper, got lower=0\.8, upper=0\.7$"),
    ({"points": [1.0, 1.0], "lower": -0.1, "upper": 0.7}, r"got lower=-0\.1, upper=0\.7"),
    ({"points": [[1.0, 1.0]] * 3, "lower": [0.1, 0.2, 0.9], "upper": 0.5}, r"lower=0\.9, upper=0\.5 at \[2\]"),
    ({"points": [1.0, 1.0], "lower": 0.1, "upper": float("inf")}, r"finite 0 <= lower <= upper"),
    ({"points": [[1.0, 1.0]] * 3, "lower": [0.1, 0.2], "upper": 0.5}, r"broadcastable to the points' shape \(3,\)"),
    ({"points": [[0.5, -0.2]], "lower": 0.1, "upper": 0.5}, r"points must be finite and >= 0 .* points\[0, 1\]=-0\.2"),
    ({"points": [0.5, float("nan")], "lower": 0.1, "upper": 0.5}, r"points must be finite and >= 0 .* points\[1\]=nan"),
    ({"points": 0.5, "lower": 0.1, "upper": 0.5}, r"points must have a last axis of d >= 1 coordinates"),
    ({"points": np.zeros((3, 0)), "lower": 0.1, "upper": 0.5}, r"points must have a last axis"),
    ({"points": ["a", "b"], "lower": 0.1, "upper": 0.5}, r"points must be an array of numbers"),
]


@pytest.mark.parametrize("index", range(len(BAD)))
def test_bad_arguments_raise_one_value_error_naming_them(index):
    arguments, message = BAD[index]
    with pytest.raises(ValueError, match=message):
        annulus_projection(arguments.pop("points"), **arguments)
