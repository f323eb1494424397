"""PLAN's options as one object (mechanisms.plan.PlanOptions, docs/design.md §5.2): the defaults
live there once and the public mechanisms' keyword defaults equal them, a bad option raises one
ValueError naming it when the object is built, and the object is passed whole: a mechanism and
run_plan with the same options draw the same estimate."""
import dataclasses
import inspect

import numpy as np
import pytest

from mechanisms import coordinate_median, plan_gaussian, plan_noscale, plan_oracle
from mechanisms.plan import PlanOptions, run_plan
from mechanisms.plan_transcript import plan_transcripts

FIELDS = {field.name: field.default for field in dataclasses.fields(PlanOptions)}
X = np.random.default_rng(4).normal(0.5, 1.0, (120, 3))
BOUNDS = (-4.0, 4.0)


def keyword_defaults(function):
    return {name: parameter.default for name, parameter in inspect.signature(function).parameters.items()
            if parameter.default is not inspect.Parameter.empty}


@pytest.mark.parametrize("function", [plan_gaussian, plan_noscale, plan_oracle, coordinate_median, plan_transcripts])
def test_every_option_a_mechanism_takes_defaults_to_the_options_default(function):
    shared = {name: default for name, default in keyword_defaults(function).items() if name in FIELDS}
    assert shared, function.__name__
    assert shared == {name: FIELDS[name] for name in shared}


def test_plan_gaussian_takes_every_option():
    assert set(FIELDS) <= set(keyword_defaults(plan_gaussian))


def test_the_defaults_are_the_published_gaussian_parameters_and_are_kept_as_checked():
    options = PlanOptions()
    assert dataclasses.asdict(options) == FIELDS
    assert (options.pre_share, options.centre_share, options.topk_share, options.beta) == (0.25, 0.25, 0.25, 0.1)
    assert PlanOptions(p=1, groups=np.int64(3)).p == 1.0 and type(PlanOptions(groups=np.int64(3)).groups) is int
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.p = 1.0


@pytest.mark.parametrize("option, value, message", [
    ("p", 0, "p must be finite and > 0, got p=0"),
    ("accounting", "paper", r"accounting must be one of \['exact', 'published'\], got accounting='paper'"),
    ("quantile", "median", "quantile must be one of"),
    ("pre_share", 1.0, r"pre_share must be in \(0, 1\), got pre_share=1.0"),
    ("centre_share", 1.5, r"centre_share must be in \(0, 1\], got centre_share=1.5"),
    ("topk_share", 0, r"topk_share must be in \(0, 1\), got topk_share=0"),
    ("groups", 1.5, "groups must be a positive integer, got groups=1.5"),
    ("max_std_distance", -1.0, "max_std_distance must be finite and > 0"),
    ("beta", 1e-320, "beta must be at least 1e-300"),
    ("spread", 0.0, "spread must be finite and > 0"),
    ("search_steps", 0, "search_steps must be a positive integer"),
])
def test_a_bad_option_raises_one_value_error_naming_it(option, value, message):
    with pytest.raises(ValueError, match=message) as raised:
        PlanOptions(**{option: value})
    assert "\n" not in str(raised.value)
    with pytest.raises(ValueError, match=message):  # the mechanisms raise the same, before any data are looked at
        plan_gaussian(None, rho=1.0, bounds=BOUNDS, rng=None, **{option: value})


def test_estimated_variances_need_a_centre_share_below_one_where_the_oracle_does_not():
    PlanOptions(centre_share=1.0)
    with pytest.raises(ValueError, match=r"centre_share must be in \(0, 1\) when the variances are estimated"):
        run_plan(X, rho=1.0, bounds=BOUNDS, rng=np.random.default_rng(0), options=PlanOptions(centre_share=1.0))
    run_plan(X, rho=1.0, bounds=BOUNDS, rng=np.random.default_rng(0), options=PlanOptions(centre_share=1.0),
             mode="oracle", std=np.ones(3))


OPTIONS = {"p": 1.0, "accounting": "published", "pre_share": 0.4, "centre_share": 0.5, "topk_share": 0.2,
           "groups": 2, "beta": 0.05, "max_std_distance": 3.0, "regularise": False, "spread": 0.2}


@pytest.mark.parametrize("options", [{}, OPTIONS, {"quantile": "binary_search", "search_steps": 12}])
def test_the_options_object_is_passed_whole(options):
    def draw(function, **arguments):
        estimate = function(X, rho=0.5, bounds=BOUNDS, rng=np.random.default_rng(9), **arguments)
        return estimate.mean, estimate.ledger

    explicit = PlanOptions(**options)
    mean, ledger = draw(plan_gaussian, **options)
    again, again_ledger = draw(run_plan, options=explicit)
    assert np.array_equal(mean, again) and ledger == again_ledger
    oracle = {name: value for name, value in options.items() if name not in ("groups",)}
    mean, ledger = draw(plan_oracle, std=np.ones(3), **oracle)
    again, again_ledger = draw(run_plan, options=PlanOptions(**oracle), mode="oracle", std=np.ones(3))
    assert np.array_equal(mean, again) and ledger == again_ledger


def test_run_plan_without_options_is_plan_gaussian_with_its_defaults():
    first = plan_gaussian(X, rho=0.5, bounds=BOUNDS, rng=np.random.default_rng(2))
    second = run_plan(X, rho=0.5, bounds=BOUNDS, rng=np.random.default_rng(2))
    assert np.array_equal(first.mean, second.mean) and first.ledger == second.ledger


def test_an_unknown_mode_is_named():
    with pytest.raises(ValueError, match="mode must be one of"):
        run_plan(X, rho=0.5, bounds=BOUNDS, rng=np.random.default_rng(2), mode="known")
