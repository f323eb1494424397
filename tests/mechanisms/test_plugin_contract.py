"""Plug-ins, estimators of one's own named "path/to/file.py:function" or "package.module:function"
(mechanisms/plugins.py, docs/design.md §4): loaded through the registry's functions like a
registered name, each broken contract one ValueError naming the plug-in and the problem."""
import math
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse

import mechanisms
from mechanisms import (
    PluginContractError,
    PluginError,
    SharedSample,
    budget_name,
    call_arguments,
    make_mechanism,
    mechanism_options,
    plugin_file,
    source_digest,
    unknown_options,
)
from mechanisms.plugins import plugin_data

GOOD = """
import numpy as np
from mechanisms import Estimate, LedgerEntry

def noisy_mean(x, *, rho, bounds, rng, scale=1.0):
    return Estimate(mean=np.asarray(x).mean(axis=0) + scale * rng.normal(size=x.shape[1]),
                    ledger=(LedgerEntry("noise", 0.75 * rho), LedgerEntry("unspent", 0.25 * rho)))
"""


def write(folder, name, text):
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A working directory of one's own: plug-in paths are relative to it."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_file_plugin_is_resolved_by_every_registry_function_like_a_registered_name(workdir):
    write(workdir, "mine.py", GOOD)
    name = "mine.py:noisy_mean"
    assert mechanisms.is_plugin(name) and not mechanisms.is_plugin("plan_gaussian")
    assert call_arguments(name) == ("x", "rho", "bounds", "rng")
    assert budget_name(name) == "rho"
    assert mechanism_options(name) == {"scale": 1.0}
    assert plugin_file(name) == "mine.py" and plugin_file("plan_gaussian") is None
    x = np.arange(12.0).reshape(4, 3)
    estimate = make_mechanism(name, scale=0.0)(x, rho=0.5, bounds=(0.0, 12.0), rng=np.random.default_rng(0))
    np.testing.assert_array_equal(estimate.mean, x.mean(axis=0))
    assert estimate.total == 0.5


def test_a_module_plugin_is_imported_from_the_python_path(workdir, monkeypatch):
    package = workdir / "my_estimators"
    package.mkdir()
    write(package, "__init__.py", "")
    write(package, "means.py", GOOD)
    monkeypatch.syspath_prepend(str(workdir))
    name = "my_estimators.means:noisy_mean"
    assert budget_name(name) == "rho" and plugin_file(name) is None
    # its fingerprint follows the module's file like a file plug-in's
    before = source_digest(name)
    assert before is not None and len(before) == 64
    (package / "means.py").write_text(GOOD.replace("0.75", "0.5").replace("0.25", "0.5"))
    assert source_digest(name) != before
    monkeypatch.delitem(sys.modules, "my_estimators.means")
    monkeypatch.delitem(sys.modules, "my_estimators")


def test_the_source_digest_follows_the_file_and_an_edited_file_is_loaded_again(workdir):
    path = write(workdir, "mine.py", GOOD)
    name = "mine.py:noisy_mean"
    first = source_digest(name)
    assert mechanism_options(name) == {"scale": 1.0}
    assert source_digest(name) == first
    path.write_text(GOOD.replace("scale=1.0", "scale=2.0"))
    assert source_digest(name) != first
    assert mechanism_options(name) == {"scale": 2.0}  # the new file's function
    assert source_digest("plan_gaussian") is None


def test_a_plugin_gets_the_plain_data_read_only_never_the_shared_sample(workdir):
    write(workdir, "peek.py", """
        from mechanisms import Estimate, LedgerEntry
        SEEN = []
        def peek(x, *, rho, rng):
            SEEN.append(x)
            return Estimate(mean=x.sum(axis=0).A1 if hasattr(x, "toarray") else x.sum(axis=0),
                            ledger=(LedgerEntry("all", rho),))
        """)
    function = make_mechanism("peek.py:peek")
    seen = sys.modules[function.__module__].SEEN  # the plug-in file's module, under its stable name
    dense = np.ones((3, 2))
    function(SharedSample(dense), rho=1.0, rng=np.random.default_rng(0))
    sparse = scipy.sparse.csr_matrix(np.eye(3))
    function(SharedSample(sparse), rho=1.0, rng=np.random.default_rng(0))
    assert isinstance(seen[0], np.ndarray) and np.shares_memory(seen[0], dense)
    with pytest.raises(ValueError, match="read-only"):
        seen[0][0, 0] = 5.0
    assert isinstance(seen[1], scipy.sparse.csr_matrix) and np.shares_memory(seen[1].data, sparse.data)
    with pytest.raises(ValueError, match="read-only"):
        seen[1].data[0] = 5.0
    assert dense[0, 0] == 1.0 and sparse.data[0] == 1.0


def test_a_plugin_cannot_make_its_data_writeable_and_the_shared_sample_stays_as_drawn(workdir):
    write(workdir, "vandal.py", """
        import numpy as np
        from mechanisms import Estimate, LedgerEntry
        def vandal(x, *, rho, rng):
            x.flags.writeable = True
            x[:] = 0
            return Estimate(mean=np.zeros(x.shape[1]), ledger=(LedgerEntry("all", rho),))
        """)
    dense = np.ones((4, 3))
    for given in (dense, SharedSample(dense), dense[:, ::2]):
        with pytest.raises(PluginError, match=r"plug-in 'vandal.py:vandal' raised ValueError: cannot set WRITEABLE"):
            make_mechanism("vandal.py:vandal")(given, rho=1.0, rng=np.random.default_rng(0))
    assert np.all(dense == 1.0)


def test_data_the_buffer_protocol_cannot_carry_is_given_as_a_read_only_copy():
    data = np.array([["2026-01-01", "2026-01-02"]], dtype="datetime64[D]")
    given = plugin_data(data)
    assert not given.flags.writeable and not np.shares_memory(given, data)
    given.flags.writeable = True  # its own copy: writing to it changes nothing shared
    given[0, 0] = np.datetime64("2000-01-01")
    assert data[0, 0] == np.datetime64("2026-01-01")


def test_an_exception_inside_a_plugin_names_the_plugin_and_keeps_the_original(workdir):
    write(workdir, "broken.py", """
        def broken(x, *, rho, rng):
            return 1 / 0
        """)
    with pytest.raises(PluginError, match=r"plug-in 'broken.py:broken' raised ZeroDivisionError: division by zero") \
            as caught:
        make_mechanism("broken.py:broken")(np.ones((4, 3)), rho=1.0, rng=np.random.default_rng(0))
    assert isinstance(caught.value.__cause__, ZeroDivisionError)


# ---------------------------------------------------------------- before any call


BAD_PLUGINS = [
    ("no_colon", None, "plan_gaussian_mine", "unknown algorithm 'plan_gaussian_mine'.*plug-in"),
    ("malformed", None, "some thing:f", r"'some thing:f' is malformed.*'some thing' is neither"),
    ("no attribute after the colon", None, "mine.py:", "'mine.py:' is malformed"),
    ("missing file", None, "nowhere/mine.py:f", r"no file 'nowhere/mine.py' \(looked for .*nowhere/mine.py"),
    ("missing module", None, "no_such_package_xyz.means:f", "no module 'no_such_package_xyz.means' on the Python path"),
    ("error inside the module", "raise RuntimeError('no licence found')\n", "mine.py:f",
     r"importing mine.py raised RuntimeError: no licence found"),
    ("syntax error", "def f(x:\n", "mine.py:f", r"importing mine.py raised SyntaxError"),
    ("missing attribute", "def g(x, *, rho, rng): pass\n", "mine.py:f", "mine.py has no attribute 'f'"),
    ("not callable", "f = 3\n", "mine.py:f", "'f' is a int, not a function"),
    ("no positional data", "def f(*, x, rho, rng): pass\n", "mine.py:f", "first parameter must take the data"),
    ("no rng", "def f(x, *, rho, seed): pass\n", "mine.py:f", "takes no keyword argument 'rng'"),
    ("no budget", "def f(x, *, rng, bounds): pass\n", "mine.py:f", "takes neither rho nor eps"),
    ("two budgets", "def f(x, *, rho, eps, rng): pass\n", "mine.py:f", "takes both rho and eps"),
    ("data by keyword", "def f(data, *, x, rho, rng): pass\n", "mine.py:f", "takes 'x' by keyword"),
    ("data named like an engine argument", "def f(bounds, *, rho, rng): pass\n", "mine.py:f",
     "the data, is named 'bounds'"),
    ("half of the user-level arguments", "def f(x, *, users, eps, rng): pass\n", "mine.py:f",
     "takes users with eps.*users, bound and batched, all three"),
    ("user-level with rho", "def f(x, *, users, bound, batched, rho, rng): pass\n", "mine.py:f",
     "takes users, bound, batched with rho"),
    ("positional-only option", "def f(x, k, /, *, rho, rng): pass\n", "mine.py:f", "'k' is positional-only"),
]


@pytest.mark.parametrize("case, source, name, message", BAD_PLUGINS, ids=[case[0] for case in BAD_PLUGINS])
def test_a_broken_plugin_is_one_error_naming_it_and_the_problem(workdir, case, source, name, message):
    if source is not None:
        write(workdir, "mine.py", source)
    for function in (make_mechanism, budget_name, mechanism_options):
        with pytest.raises(ValueError, match=message) as caught:
            function(name)
        if mechanisms.is_plugin(name):
            assert isinstance(caught.value, PluginError) and repr(name) in str(caught.value)
        assert "\n" not in str(caught.value)


def test_an_import_error_of_the_user_s_own_dependency_is_not_taken_for_a_missing_module(workdir, monkeypatch):
    package = workdir / "uses_missing"
    package.mkdir()
    write(package, "__init__.py", "import no_such_dependency_abc\n")
    monkeypatch.syspath_prepend(str(workdir))
    with pytest.raises(PluginError, match="importing uses_missing raised ModuleNotFoundError: No module named "
                                          "'no_such_dependency_abc'"):
        budget_name("uses_missing:f")


def test_options_are_checked_against_the_signature_and_kwargs_take_any_but_engine_arguments(workdir):
    write(workdir, "mine.py", """
        def named(x, *, rho, rng, width, bounds=None):
            pass
        def open_ended(values, *, eps, rng, **settings):
            pass
        """)
    assert mechanism_options("mine.py:named") == {"width": mechanisms.plugins.inspect.Parameter.empty}
    assert unknown_options("mine.py:named", {"width": 1, "depth": 2}) == ["depth"]
    with pytest.raises(ValueError, match=r"unknown option 'depth' for algorithm 'mine.py:named'.*\['width'\]"):
        make_mechanism("mine.py:named", depth=2)
    assert mechanism_options("mine.py:open_ended") == {}
    assert unknown_options("mine.py:open_ended", {"anything": 1, "eps": 2, "values": 3, "bounds": 4}) == \
        ["bounds", "eps", "values"]
    assert budget_name("mine.py:open_ended") == "eps"


# ---------------------------------------------------------------- after every call


def returning(workdir, body, *, budget="rho"):
    """make_mechanism of a plug-in whose body is ``body`` (x, rho or eps in scope)."""
    write(workdir, "ret.py", f"""
        import math
        import numpy as np
        from mechanisms import Estimate, LedgerEntry, PureLedgerEntry
        def f(x, *, {budget}, rng):
            budget = {budget}
            return {body}
        """)
    return make_mechanism("ret.py:f")


CONTRACT = [
    ("not an estimate", "np.zeros(x.shape[1])", "returned a ndarray, not a mechanisms.Estimate"),
    ("wrong shape", "Estimate(mean=np.zeros(x.shape[1] + 1), ledger=(LedgerEntry('a', budget),))",
     r"mean of shape \(4,\); expected \(3,\)"),
    ("not finite", "Estimate(mean=np.array([0.0, math.nan, 1.0]), ledger=(LedgerEntry('a', budget),))",
     "1 non-finite value.*nan at flat index 1"),
    ("not numbers", "Estimate(mean=np.array(['a', 'b', 'c']), ledger=(LedgerEntry('a', budget),))",
     "dtype <U1, not real numbers"),
    ("booleans", "Estimate(mean=np.array([True, False, True]), ledger=(LedgerEntry('a', budget),))",
     "dtype bool, not real numbers"),
    ("empty ledger", "Estimate(mean=np.zeros(3), ledger=())", r"returned the ledger \(\); book every share"),
    ("plain tuples", "Estimate(mean=np.zeros(3), ledger=(('a', budget),))",
     r"booked \('a', 0.5\); a plug-in that takes rho books LedgerEntry"),
    ("pure entries for rho", "Estimate(mean=np.zeros(3), ledger=(PureLedgerEntry('a', budget),))",
     "booked PureLedgerEntry.*LedgerEntry\\(step, rho\\) entries only"),
    ("negative share", "Estimate(mean=np.zeros(3), ledger=(LedgerEntry('a', 2 * budget), LedgerEntry('b', -budget)))",
     "every share must be finite and >= 0"),
    ("lying ledger", "Estimate(mean=np.zeros(3), ledger=(LedgerEntry('a', budget / 4),))",
     r"its ledger sums to 0.125 rho, not the rho=0.5 it was called with"),
]


@pytest.mark.parametrize("case, body, message", CONTRACT, ids=[case[0] for case in CONTRACT])
def test_what_a_plugin_returns_is_checked_after_the_call(workdir, case, body, message):
    function = returning(workdir, body)
    with pytest.raises(PluginContractError, match=message) as caught:
        function(np.zeros((5, 3)), rho=0.5, rng=np.random.default_rng(0))
    assert "'ret.py:f'" in str(caught.value)


def test_a_pure_dp_plugin_books_pure_entries_summing_to_eps_within_a_relative_1e_9(workdir):
    exact = returning(workdir, "Estimate(mean=np.zeros(3), ledger=(PureLedgerEntry('a', budget * (1 - 1e-10)),))",
                      budget="eps")
    assert exact(np.zeros((5, 3)), eps=2.0, rng=np.random.default_rng(0)).unit == "eps"
    zcdp = returning(workdir, "Estimate(mean=np.zeros(3), ledger=(LedgerEntry('a', budget),))", budget="eps")
    with pytest.raises(PluginContractError, match="takes eps books PureLedgerEntry"):
        zcdp(np.zeros((5, 3)), eps=2.0, rng=np.random.default_rng(0))
    off = returning(workdir, "Estimate(mean=np.zeros(3), ledger=(PureLedgerEntry('a', budget * (1 + 1e-8)),))",
                    budget="eps")
    with pytest.raises(PluginContractError, match="sums to 2.00000002 eps"):
        off(np.zeros((5, 3)), eps=2.0, rng=np.random.default_rng(0))


def test_a_batched_user_level_plugin_returns_one_row_per_run(workdir):
    write(workdir, "users.py", """
        import numpy as np
        from mechanisms import laplace
        def again(samples, *, users, eps, bound, rng, batched=False):
            return laplace(samples, users=users, eps=eps, bound=bound, rng=rng, batched=batched)
        def flat(samples, *, users, eps, bound, rng, batched=False):
            estimate = laplace(samples, users=users, eps=eps, bound=bound, rng=rng, batched=batched)
            return type(estimate)(mean=estimate.mean.ravel(), ledger=estimate.ledger)
        """)
    users = np.repeat(np.arange(4), 2)
    samples = np.random.default_rng(1).uniform(0, 1, size=(6, users.size))
    arguments = dict(users=users, eps=1.0, bound=1.0, batched=True)
    ours = mechanisms.laplace(samples, rng=np.random.default_rng(2), **arguments)
    theirs = make_mechanism("users.py:again")(samples, rng=np.random.default_rng(2), **arguments)
    np.testing.assert_array_equal(theirs.mean, ours.mean)
    assert theirs.mean.shape == (6, 1)
    with pytest.raises(PluginContractError, match=r"mean of shape \(6,\); expected \(6, 1\)"):
        make_mechanism("users.py:flat")(samples, rng=np.random.default_rng(2), **arguments)


def test_the_after_call_check_holds_for_exact_registered_mechanisms_but_not_the_empirical_mean():
    """Why only plug-ins are checked after every call: the project's exact-accounting mechanisms
    keep the contract already (their own tests check their ledgers), and the empirical mean books
    an infinite release (docs/design.md §4), which the check would refuse."""
    x = np.random.default_rng(3).normal(size=(200, 4))
    check = mechanisms.plugins.check_estimate
    for name in ("plan_gaussian", "iome", "coordinate_median"):
        estimate = make_mechanism(name)(x, rho=0.5, bounds=(-8.0, 8.0), rng=np.random.default_rng(4))
        check(estimate, plugin=name, budget_name="rho", budget=0.5, shape=(4,))
    empirical = make_mechanism("empirical_mean")(x, rho=0.5, bounds=(-8.0, 8.0), rng=np.random.default_rng(4))
    assert math.isinf(empirical.total)
    with pytest.raises(PluginContractError, match="booked LedgerEntry.*finite"):
        check(empirical, plugin="empirical_mean", budget_name="rho", budget=0.5, shape=(4,))
