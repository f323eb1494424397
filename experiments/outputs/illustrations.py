"""Illustration figures drawn from the project's own mechanisms (no published numbers to match).

- ``figure1``: PLAN paper Figure 1, Algorithm 1 step by step on 2-D Gaussian data: the raw data
  and their mean (a), the recentred and scaled points of line 5 (b), the clipping of line 6 and
  line 8 (c), the private mean (d); every number from one call of ``mechanisms.plan_gaussian``
  (exact accounting) and its diagnostics.
- ``figure6``: PLAN paper Figure 6 (Appendix C): the shape of the noise for four scalings
  s_i proportional to Delta_i^gamma of two queries with sensitivities (4, 1), from
  ``mechanisms.scaling``.
- ``userlevel_figure1``: the user-level paper's Figure 1 (Section III-A): the annulus A_{a,b} in
  the simplex of radius U and the projections q = A_{a,b}(p) of two points, from
  ``mechanisms.userlevel.annulus_projection``.

Each job writes a PDF and a PNG (reproducible bytes: no creation date, no software version;
written atomically) and a CSV of the numbers the figure shows (fixed float format). The data
and the mechanism draw from generators derived from the config seed:
SeedSequence(seed, spawn_key=(id("illustrations"), id(name), stream)).
"""
from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")  # no display; must precede any pyplot import anywhere in the process

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Circle, Ellipse, Polygon  # noqa: E402

import mechanisms  # noqa: E402

from ..engine.atomic import write_atomically  # noqa: E402
from ..engine.trials import stable_id  # noqa: E402
from .styles import ALERT, INK, REFERENCE, mechanism_style  # noqa: E402

PNG_DPI = 150
FLOAT_FORMAT = "%.10g"  # fixed formatting: byte-identical CSVs for identical numbers
FONT_SIZE = 11
TITLE_SIZE = 12
# rcParams while a figure is built (text sizes are fixed when an artist is created)
STYLE = {"font.size": FONT_SIZE, "axes.titlesize": FONT_SIZE, "axes.labelsize": FONT_SIZE,
         "legend.fontsize": 10, "xtick.labelsize": 10, "ytick.labelsize": 10}


@dataclass(frozen=True)
class Illustration:
    """A drawn figure, the numbers it shows (written as CSV) and the lines for the job's log."""

    figure: Figure
    table: pd.DataFrame
    lines: tuple[str, ...]


def generator(seed: int, name: str, stream: int) -> np.random.Generator:
    """The illustration ``name``'s generator number ``stream`` (0: data, 1: mechanism)."""
    key = (stable_id("illustrations"), stable_id(name), stream)
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=key))


# ----------------------------------------------------------------- PLAN paper Figure 1


@dataclass(frozen=True)
class PlanSteps:
    """One run of PLAN (exact accounting) on 2-D data, with the intermediate points of
    Algorithm 1 rebuilt from its diagnostics: the centre mu~ (line 4), the scale b (line 5,
    Sigma^-1/(p+2) with the regularised estimates), z = (x - centre) b, the clip threshold C
    (line 6) and every z clipped to norm at most C (line 8)."""

    x: np.ndarray  # n x 2 raw data
    true_mean: np.ndarray
    true_std: np.ndarray
    rho: float
    estimate: mechanisms.Estimate

    @property
    def centre(self) -> np.ndarray:
        return self.estimate.diagnostics["centre"]

    @property
    def scale(self) -> np.ndarray:
        return self.estimate.diagnostics["scale"]

    @property
    def clip_threshold(self) -> float:
        return float(self.estimate.diagnostics["clip_threshold"])

    @property
    def recentred(self) -> np.ndarray:
        return self.x - self.centre

    @property
    def scaled(self) -> np.ndarray:
        return self.recentred * self.scale

    @property
    def was_clipped(self) -> np.ndarray:
        """Rows whose scaled norm exceeds C (line 8 shrinks them onto the sphere of radius C)."""
        return np.linalg.norm(self.scaled, axis=1) > self.clip_threshold

    @property
    def clipped(self) -> np.ndarray:
        """min(1, C / ||z||) z for every row (line 8)."""
        norms = np.linalg.norm(self.scaled, axis=1)
        return self.scaled * np.minimum(1.0, self.clip_threshold / np.maximum(norms, 1e-300))[:, None]

    @property
    def private_mean(self) -> np.ndarray:
        return self.estimate.mean

    @property
    def empirical_mean(self) -> np.ndarray:
        return self.x.mean(axis=0)


def plan_steps(*, n: int, mean, std, rho: float, bounds, seed: int) -> PlanSteps:
    """Draw n points of N(mean, diag(std^2)) and run ``mechanisms.plan_gaussian`` on them
    (exact accounting, the published defaults otherwise) with the generators of ``figure1``."""
    mean, std = np.asarray(mean, dtype=float), np.asarray(std, dtype=float)
    x = mean + std * generator(seed, "figure1", 0).standard_normal((n, mean.size))
    estimate = mechanisms.plan_gaussian(x, rho=rho, bounds=tuple(bounds), rng=generator(seed, "figure1", 1),
                                        accounting="exact")
    return PlanSteps(x=x, true_mean=mean, true_std=std, rho=float(rho), estimate=estimate)


def plan_steps_table(steps: PlanSteps) -> pd.DataFrame:
    """One row: the parameters and every number Figure 1 shows."""
    row = {"n": steps.x.shape[0], "rho": steps.rho, "ledger_total": steps.estimate.total}
    for name, values in (("true_mean", steps.true_mean), ("true_std", steps.true_std), ("centre", steps.centre),
                         ("scale", steps.scale)):
        row |= {f"{name}_{i + 1}": float(v) for i, v in enumerate(values)}
    row |= {"clip_threshold": steps.clip_threshold,
            "fraction_clipped": float(steps.estimate.diagnostics["fraction_clipped"])}
    row |= {f"private_mean_{i + 1}": float(v) for i, v in enumerate(steps.private_mean)}
    row["private_error_l2"] = float(np.linalg.norm(steps.private_mean - steps.true_mean))
    row |= {f"empirical_mean_{i + 1}": float(v) for i, v in enumerate(steps.empirical_mean)}
    row["empirical_error_l2"] = float(np.linalg.norm(steps.empirical_mean - steps.true_mean))
    return pd.DataFrame([row])


# PLAN's steps are not mechanisms: neutral inks (experiments/outputs/styles.py); its output is PLAN-exact's
RAW_COLOR, RECENTRED_COLOR, SCALED_COLOR, CLIPPED_COLOR = "0.45", REFERENCE, INK, ALERT
PRIVATE_COLOR = mechanism_style("PLAN-exact").color
TRUE_MEAN_STYLE = {"marker": "*", "s": 320, "color": "gold", "edgecolors": "black", "linewidths": 0.8, "zorder": 5}
EMPIRICAL_STYLE = {"marker": "o", "s": 60, "facecolors": "none", "edgecolors": "black", "linewidths": 1.5,
                   "zorder": 5}
PRIVATE_STYLE = {"marker": "X", "s": 150, "color": PRIVATE_COLOR, "edgecolors": "white", "linewidths": 0.6,
                 "zorder": 6}


def _equal_axes(ax) -> None:
    """Equal units on both axes (geometry matters); the data limits fill the panel's box."""
    ax.set_aspect("equal", adjustable="datalim")
    ax.grid(True, color="0.92", linewidth=0.6)
    ax.set_axisbelow(True)


def figure1(steps: PlanSteps) -> Figure:
    """Four panels in a row: (a) raw data and true mean, (b) recentring and scaling (line 5),
    (c) clipping to norm C (lines 6 and 8), (d) true, empirical and private mean; one legend
    below them."""
    fig = Figure(figsize=(13.5, 4.1), layout="constrained")
    axes = fig.subplots(1, 4)
    x, small = steps.x, {"s": 5, "linewidths": 0}

    ax = axes[0]
    ax.scatter(x[:, 0], x[:, 1], color=RAW_COLOR, alpha=0.5, **small)
    ax.scatter(*steps.true_mean, **TRUE_MEAN_STYLE)
    ax.set_title("(a) raw data, true mean (star)")
    ax.set_xlabel("$x_1$")
    ax.set_ylabel("$x_2$")

    ax = axes[1]
    ax.scatter(*steps.recentred.T, color=RECENTRED_COLOR, alpha=0.45, **small)
    ax.scatter(*steps.scaled.T, color=SCALED_COLOR, alpha=0.7, **small)
    ax.axhline(0.0, color="0.6", linewidth=0.6)
    ax.axvline(0.0, color="0.6", linewidth=0.6)
    ax.set_title("(b) recentring and scaling (line 5)")
    ax.set_xlabel("coordinate 1")

    ax = axes[2]
    clipped, moved = steps.clipped, steps.was_clipped
    ax.scatter(*steps.scaled[~moved].T, color=SCALED_COLOR, alpha=0.7, **small)
    ax.add_collection(LineCollection(np.stack([steps.scaled[moved], clipped[moved]], axis=1), colors="0.55",
                                     linewidths=0.7))
    ax.scatter(*steps.scaled[moved].T, s=14, facecolors="none", edgecolors="0.5", linewidths=0.7)
    ax.scatter(*clipped[moved].T, s=14, color=CLIPPED_COLOR, linewidths=0, zorder=4)
    ax.add_patch(Circle((0.0, 0.0), steps.clip_threshold, fill=False, linestyle="--", linewidth=1.4, color="black"))
    share = 100.0 * float(steps.estimate.diagnostics["fraction_clipped"])
    ax.set_title(f"(c) clipping at C = {steps.clip_threshold:.2f} (line 6): {share:.1f} %")
    ax.set_xlabel("scaled coordinate 1")
    ax.autoscale_view()

    ax = axes[3]
    ax.scatter(x[:, 0], x[:, 1], color=RAW_COLOR, alpha=0.25, **small)
    _mean_markers(ax, steps)
    ax.set_title("(d) private mean (cross)")
    ax.set_xlabel("$x_1$")
    # The three means lie within a fraction of a standard deviation: a zoomed inset separates them.
    errors = [np.abs(steps.private_mean - steps.true_mean).max(), np.abs(steps.empirical_mean - steps.true_mean).max()]
    half = max(2.0 * max(errors), 0.02 * float(steps.true_std.max()))
    inset = ax.inset_axes([0.55, 0.55, 0.43, 0.43])
    _mean_markers(inset, steps)
    inset.set_xlim(steps.true_mean[0] - half, steps.true_mean[0] + half)
    inset.set_ylim(steps.true_mean[1] - half, steps.true_mean[1] + half)
    inset.set_aspect("equal")
    inset.tick_params(labelsize=8)
    ax.indicate_inset_zoom(inset, edgecolor="0.3")

    for ax in axes:
        _equal_axes(ax)
    fig.legend(handles=_figure1_legend(steps), loc="outside lower center", ncol=5, frameon=False, handletextpad=0.3,
               columnspacing=1.4)
    fig.suptitle(
        f"PLAN paper, Figure 1: PLAN (Algorithm 1) step by step on n = {x.shape[0]} points of "
        f"N(({steps.true_mean[0]:g}, {steps.true_mean[1]:g}), diag({steps.true_std[0]:g}², {steps.true_std[1]:g}²)); "
        f"plan_gaussian, exact accounting, ρ = {steps.rho:g}",
        fontsize=TITLE_SIZE,
    )
    return fig


def _figure1_legend(steps: PlanSteps) -> list[Line2D]:
    """Legend entries of Figure 1 with readable marker sizes (the scatter points are tiny)."""
    def point(label, color, *, marker="o", size=6.0, hollow=False, edge=None):
        return Line2D([], [], linestyle="none", marker=marker, markersize=size, label=label,
                      markerfacecolor="none" if hollow else color, markeredgecolor=edge or color)

    b = steps.scale
    return [
        point("raw data $x$", RAW_COLOR),
        point("true mean", "gold", marker="*", size=15, edge="black"),
        point(r"recentred $x - \tilde\mu$", RECENTRED_COLOR),
        point(rf"scaled $z = (x - \tilde\mu)\,b$, b = ({b[0]:.2f}, {b[1]:.2f})", SCALED_COLOR),
        point("z beyond C (before clipping)", "0.5", hollow=True),
        point("clipped onto the circle", CLIPPED_COLOR),
        Line2D([], [], linestyle="--", color="black", linewidth=1.4, label="clip radius C"),
        point("empirical mean", "black", size=8, hollow=True),
        point("private mean", PRIVATE_COLOR, marker="X", size=12, edge="white"),
    ]


def _mean_markers(ax, steps: PlanSteps) -> None:
    """The true mean (star), the empirical mean (ring) and the private mean (cross)."""
    ax.scatter(*steps.true_mean, **TRUE_MEAN_STYLE)
    ax.scatter(*steps.empirical_mean, **EMPIRICAL_STYLE)
    ax.scatter(*steps.private_mean, **PRIVATE_STYLE)


def figure1_illustration(spec: Mapping, *, seed: int) -> Illustration:
    """Figure 1 from the config entry (n, mean, std, rho, bounds)."""
    steps = plan_steps(n=spec["n"], mean=spec["mean"], std=spec["std"], rho=spec["rho"], bounds=spec["bounds"],
                       seed=seed)
    table = plan_steps_table(steps)
    row = table.iloc[0]
    lines = (f"n = {steps.x.shape[0]}, rho = {steps.rho:g} (ledger total {row['ledger_total']:.10g}), "
             f"clip threshold {row['clip_threshold']:.4g}, {100 * row['fraction_clipped']:.2f} % clipped",
             f"l2 error: private mean {row['private_error_l2']:.4g}, empirical mean {row['empirical_error_l2']:.4g}")
    return Illustration(figure1(steps), table, lines)


# ----------------------------------------------------------------- PLAN paper Figure 6


@dataclass(frozen=True)
class Scaling:
    """A scaling s_i proportional to Delta_i^gamma drawn in Figure 6: PLAN's (p = 2) and no scaling
    in their mechanisms' colours (PLAN, PLAN without scaling as specified), the others in neutral inks
    told apart by their dashes."""

    name: str
    label: str
    gamma: float
    color: str
    dashes: object = "-"


SCALINGS = (
    Scaling("first_moment", "first moment (p = 1)", mechanisms.moment_optimal_gamma(1), INK, (0, (5, 2.5))),
    Scaling("second_moment", "second moment (p = 2)", mechanisms.moment_optimal_gamma(2),
            mechanism_style("PLAN").color),
    Scaling("even_split", "budget split evenly", 1.0, INK, (0, (1, 1.5))),
    Scaling("no_scaling", "no scaling", 0.0, mechanism_style("PLAN-noscale").color),
)


def scaling_table(*, sensitivities, rho: float, samples: int, rng: np.random.Generator) -> pd.DataFrame:
    """Per scaling: gamma, the noise std per axis and the expected moments E||eta||_1 and
    E||eta||_2^2 (Lemma C.1), and the same measured on ``samples`` draws of the noise
    (``mechanisms.sample_noise``: a Monte-Carlo check of the closed forms)."""
    rows = []
    for scaling in SCALINGS:
        s = mechanisms.power_scaling(sensitivities, gamma=scaling.gamma)
        std = mechanisms.noise_std(sensitivities, scaling=s, rho=rho)
        noise = mechanisms.sample_noise(sensitivities, scaling=s, rho=rho, size=samples, rng=rng)
        sampled_std = noise.std(axis=0)
        rows.append({
            "scaling": scaling.name, "gamma": scaling.gamma, "rho": float(rho),
            "sensitivity_horizontal": float(sensitivities[0]), "sensitivity_vertical": float(sensitivities[1]),
            "std_horizontal": float(std[0]), "std_vertical": float(std[1]),
            "expected_l1": mechanisms.expected_noise_moment(sensitivities, scaling=s, rho=rho, p=1),
            "expected_l2_squared": mechanisms.expected_noise_moment(sensitivities, scaling=s, rho=rho, p=2),
            "samples": samples,
            "sampled_std_horizontal": float(sampled_std[0]), "sampled_std_vertical": float(sampled_std[1]),
            "sampled_l1": float(np.abs(noise).sum(axis=1).mean()),
            "sampled_l2_squared": float(np.square(noise).sum(axis=1).mean()),
        })
    return pd.DataFrame(rows)


def figure6(table: pd.DataFrame) -> Figure:
    """The 1-standard-deviation contour of each scaling's noise: an axis-parallel ellipse
    centred at 0 with half-axes (std horizontal, std vertical)."""
    fig = Figure(figsize=(7.4, 6.6), layout="constrained")
    ax = fig.subplots()
    styles = {scaling.name: scaling for scaling in SCALINGS}
    for row in table.itertuples(index=False):
        scaling = styles[row.scaling]
        label = (f"{scaling.label}: $\\gamma$ = {row.gamma:.3g}, std ({row.std_horizontal:.2f}, "
                 f"{row.std_vertical:.2f}), $E\\|\\eta\\|_1$ = {row.expected_l1:.2f}, "
                 f"$E\\|\\eta\\|_2^2$ = {row.expected_l2_squared:.1f}")
        ax.add_patch(Ellipse((0.0, 0.0), 2.0 * row.std_horizontal, 2.0 * row.std_vertical, fill=False,
                             color=scaling.color, linestyle=scaling.dashes, linewidth=2.4, label=label))
    reach = 1.15 * float(max(table["std_horizontal"].max(), table["std_vertical"].max()))
    ax.set_xlim(-reach, reach)
    ax.set_ylim(-reach, reach)
    ax.set_aspect("equal")
    ax.grid(True, color="0.92", linewidth=0.6)
    ax.set_axisbelow(True)
    first = table.iloc[0]
    ax.set_xlabel(f"noise on the horizontal query (sensitivity {first['sensitivity_horizontal']:g})")
    ax.set_ylabel(f"noise on the vertical query (sensitivity {first['sensitivity_vertical']:g})")
    fig.legend(loc="outside lower center", frameon=False, ncol=1, fontsize=9.5, handlelength=1.6)
    fig.suptitle(
        "PLAN paper, Figure 6: shape of the noise (1-std contours) for scalings $s_i \\propto \\Delta_i^\\gamma$\n"
        f"of two queries with sensitivities ({first['sensitivity_horizontal']:g}, "
        f"{first['sensitivity_vertical']:g}), ρ = {first['rho']:g} (Appendix C)",
        fontsize=TITLE_SIZE,
    )
    return fig


def figure6_illustration(spec: Mapping, *, seed: int) -> Illustration:
    """Figure 6 from the config entry (sensitivities, rho, samples)."""
    table = scaling_table(sensitivities=np.asarray(spec["sensitivities"], dtype=float), rho=float(spec["rho"]),
                          samples=int(spec["samples"]), rng=generator(seed, "figure6", 0))
    lines = tuple(f"{row.scaling}: gamma {row.gamma:.4g}, std ({row.std_horizontal:.4g}, {row.std_vertical:.4g}), "
                  f"E|eta|_1 {row.expected_l1:.4g} (sampled {row.sampled_l1:.4g}), "
                  f"E||eta||_2^2 {row.expected_l2_squared:.4g} (sampled {row.sampled_l2_squared:.4g})"
                  for row in table.itertuples(index=False))
    return Illustration(figure6(table), table, lines)


# ----------------------------------------------------------------- user-level paper Figure 1


def annulus_table(*, bound: float, lower: float, upper: float, p1, p2) -> pd.DataFrame:
    """The points p1, p2 and their projections q = A_{a,b}(p) with their l1 norms (rows p1, q1, p2, q2)."""
    points = np.array([p1, p2], dtype=float)
    projected = mechanisms.annulus_projection(points, lower=lower, upper=upper)
    rows = []
    for index, (point, image) in enumerate(zip(points, projected), start=1):
        for name, values in ((f"p{index}", point), (f"q{index}", image)):
            rows.append({"point": name, "x1": float(values[0]), "x2": float(values[1]),
                         "l1_norm": float(values.sum()), "a": float(lower), "b": float(upper), "U": float(bound)})
    return pd.DataFrame(rows)


def userlevel_figure1(table: pd.DataFrame) -> Figure:
    """The simplex of radius U, the annulus A_{a,b} shaded, p1 -> q1 and p2 -> q2 with arrows
    (along the rays from 0: the projection keeps the direction)."""
    first = table.iloc[0]
    a, b, bound = float(first["a"]), float(first["b"]), float(first["U"])
    fig = Figure(figsize=(6.6, 6.6), layout="constrained")
    ax = fig.subplots()
    ax.add_patch(Polygon([(0, 0), (bound, 0), (0, bound)], closed=True, fill=False, edgecolor="black", linewidth=1.4,
                         label=r"simplex $\Delta_U$"))
    ax.add_patch(Polygon([(a, 0), (b, 0), (0, b), (0, a)], closed=True, facecolor=REFERENCE, alpha=0.35, edgecolor=INK,
                         linewidth=1.6, label=r"annulus $A_{a,b}$"))
    points = {row.point: np.array([row.x1, row.x2]) for row in table.itertuples(index=False)}
    for index in (1, 2):
        p, q = points[f"p{index}"], points[f"q{index}"]
        far = p if p.sum() >= q.sum() else q
        ax.plot([0, far[0]], [0, far[1]], linestyle=":", color="0.5", linewidth=1.0)
        ax.annotate("", xy=q, xytext=p, arrowprops={"arrowstyle": "-|>", "color": "black", "linewidth": 1.3,
                                                    "shrinkA": 4, "shrinkB": 4})
        ax.scatter(*p, marker="x", s=90, color="black", linewidths=2.0, zorder=4)
        ax.scatter(*q, marker="o", s=45, color=ALERT, zorder=4)
        # p below right of its marker, q above right: clear of the arrow between them
        for name, position, offset in ((f"p_{index}", p, (7, -17)), (f"q_{index}", q, (6, 6))):
            ax.annotate(f"${name}$", position, xytext=offset, textcoords="offset points", fontsize=13)
    ticks, names = [a, b, bound], ["$a$", "$b$", "$U$"]
    ax.set_xticks(ticks, labels=names)
    ax.set_yticks(ticks, labels=names)
    ax.tick_params(labelsize=12)
    ax.set_xlim(0, 1.08 * bound)
    ax.set_ylim(0, 1.08 * bound)
    ax.set_aspect("equal")
    ax.spines[["top", "right"]].set_visible(False)
    ax.set_xlabel("$(x)_1$", fontsize=13)
    ax.set_ylabel("$(x)_2$", fontsize=13)
    ax.legend(loc="upper right", frameon=False)
    fig.suptitle(
        f"User-level paper, Figure 1: the annulus $A_{{a,b}}$ (shaded), d = 2,\n"
        f"a = {a:g}, b = {b:g}, U = {bound:g}; $q_i = A_{{a,b}}(p_i)$, the $\\ell_1$ projection (Section III-A)",
        fontsize=TITLE_SIZE,
    )
    return fig


def userlevel_figure1_illustration(spec: Mapping, *, seed: int) -> Illustration:
    """The user-level Figure 1 from the config entry (bound, lower, upper, p1, p2); deterministic:
    ``seed`` is unused (the points are the config's)."""
    table = annulus_table(bound=spec["bound"], lower=spec["lower"], upper=spec["upper"], p1=spec["p1"], p2=spec["p2"])
    lines = tuple(f"{row.point} = ({row.x1:.4g}, {row.x2:.4g}), l1 norm {row.l1_norm:.4g}"
                  for row in table.itertuples(index=False))
    return Illustration(userlevel_figure1(table), table, lines)


ILLUSTRATIONS: dict[str, Callable[..., Illustration]] = {
    "figure1": figure1_illustration,
    "figure6": figure6_illustration,
    "userlevel_figure1": userlevel_figure1_illustration,
}


def draw(name: str, spec: Mapping, *, seed: int) -> Illustration:
    """The illustration ``name`` (a key of ILLUSTRATIONS) with the config's parameters ``spec``."""
    if name not in ILLUSTRATIONS:
        raise ValueError(f"unknown illustration {name!r}; known: {sorted(ILLUSTRATIONS)}")
    with matplotlib.rc_context(STYLE):
        return ILLUSTRATIONS[name](spec, seed=seed)


def save(illustration: Illustration, *, pdf, png, csv) -> None:
    """Write the figure as PDF and PNG and its numbers as CSV, each atomically and reproducibly."""
    fig = illustration.figure
    write_atomically(pdf, lambda stream: fig.savefig(stream, format="pdf", metadata={"CreationDate": None}))
    write_atomically(png, lambda stream: fig.savefig(stream, format="png", dpi=PNG_DPI, metadata={"Software": None}))
    text = io.StringIO()
    illustration.table.to_csv(text, index=False, float_format=FLOAT_FORMAT, lineterminator="\n")
    write_atomically(csv, lambda stream: stream.write(text.getvalue().encode("utf-8")))
