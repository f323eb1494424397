"""How every figure draws mechanisms and budgets: defined once, used by all figures.

The PLAN paper's plotting notebook encodes the mechanism by COLOUR (a colour-blind palette) and
the privacy budget rho by DASH PATTERN AND MARKER; we do the same in every figure, so a
mechanism has one colour and a rho one line style wherever they appear. The palette is
Okabe and Ito's colour-blind-safe set. A mechanism that is not listed gets a colour from a
fallback palette chosen by a stable hash of its name, and an unlisted rho a line style chosen
the same way: both are still the same in every figure.

Where a figure's curves differ by another grid parameter at a fixed rho (the paper's Figure
5(a): one curve per mechanism and share of p = 1/2 coordinates, at rho = 1/2), that parameter
takes the dash and marker from its own table (``SERIES_STYLES``), and the legend says so; so does
the break of the audit's power curves (the factor a mechanism's budget is multiplied by).

A family of variants that differ in one option is one mechanism drawn in one colour, the option
taking the dash and marker (``VARIANT_STYLES``): CoinPress's number of iterations t (the IOME
and CoinPress papers' figures draw t = 1, 2, 3, 4, 5, 10 side by side) and the clipping quantile
of IOME's Figure 9. Such figures draw one rho per panel (panel ``series: none``).

Several names that are one mechanism share its colour (``SAME_MECHANISM``: PLAN on Gaussian and
binary data, ...); no other two do. What is not a mechanism (a reference line, published numbers,
an audit's marks, an illustration's steps) is drawn in the neutral inks ``INK``, ``REFERENCE`` and
``ALERT``, which no mechanism takes. Where a figure draws mechanisms without a series (the library
comparisons' x is rho), a mechanism's ``marker`` tells its line apart besides its colour.
"""
from __future__ import annotations

import math
import zlib
from dataclasses import dataclass

# Okabe-Ito colour-blind-safe palette.
BLUE = "#0072B2"
ORANGE = "#E69F00"
GREEN = "#009E73"
BLACK = "#000000"
VERMILLION = "#D55E00"
SKY_BLUE = "#56B4E9"
PURPLE = "#CC79A7"
COINPRESS = "#009988"  # Paul Tol's teal: every CoinPress mean with a covariance assumed
MVCREC = "#CC6677"  # Paul Tol's rose: CoinPress with its private covariance estimate first
# neutral inks for what is not a mechanism
INK = "#404040"  # marks that are not a mechanism's curve: an audit's bounds, the errata's settings
REFERENCE = "#999999"  # reference lines and published numbers: a claim, a diagonal, a limit
ALERT = "#B2182B"  # a failure or a violation


@dataclass(frozen=True)
class MechanismStyle:
    """The legend label and the colour of a mechanism; ``companion``: ours, drawn beside the
    paper's curves (its off-scale points are capped instead of stretching the axis);
    ``variant``: (option, value) for a member of a family drawn in one colour whose members
    differ in that option (its dash and marker: ``VARIANT_STYLES``)."""

    label: str
    color: str
    companion: bool = False
    variant: tuple[str, float] | None = None
    marker: str | None = None


def _library_styles(name: str, label: str, color: str, two_pass_color: str, markers: tuple[str, str],
                    two_pass_label: str = "our two-pass: its private quantiles, then its mean",
                    ) -> dict[str, MechanismStyle]:
    """A library adapter's variants (config names ``<name>[-binary][-two-pass]``): one colour and
    marker with the universe as bounds, others with our two-pass recipe for unknown bounds
    (docs/design.md §6.1)."""
    styles = {}
    for suffix in ("", "-binary"):
        styles[f"{name}{suffix}"] = MechanismStyle(f"{label}, bounds given", color, marker=markers[0])
        styles[f"{name}{suffix}-two-pass"] = MechanismStyle(f"{label}, {two_pass_label}", two_pass_color,
                                                            marker=markers[1])
    return styles


MECHANISM_STYLES = {
    # Gaussian figures: the paper's curves
    "PLAN": MechanismStyle("PLAN", BLUE, marker="s"),
    "IOME": MechanismStyle("IOME", ORANGE, marker="^"),
    "empirical_mean": MechanismStyle("Empirical mean (non-private)", BLACK),
    # the published "PLAN without scaling" curve is a private coordinate-wise median (our errata)
    "coordinate_median": MechanismStyle("PLAN without scaling, as published (a private coordinate-wise median)",
                                        GREEN, marker="8"),
    # ours, beside the paper's curves (extended figures only)
    "PLAN-exact": MechanismStyle("PLAN, exact accounting (ours)", VERMILLION, companion=True, marker="o"),
    "PLAN-noscale": MechanismStyle("PLAN without scaling, as specified (ours)", SKY_BLUE),
    # binary data: the same roles, the same colours
    "PLAN-binary": MechanismStyle("PLAN", BLUE, marker="s"),
    "IOME-binary": MechanismStyle("IOME", ORANGE, marker="^"),
    "PLAN-binary-noscale": MechanismStyle("PLAN without scaling", GREEN, marker="8"),
    "PLAN-binary-oracle": MechanismStyle("PLAN, true variances (non-private)", PURPLE, marker="d"),
    # user-level clipping (their own figures)
    "Laplace": MechanismStyle("vanilla Laplace", "#EE8866"),
    "OPT-wc": MechanismStyle("OPT-wc (worst-case optimal clipping)", "#AA3377"),
    "AKMV": MechanismStyle("AKMV (private quantile clipping)", "#AAAA00"),
    # CoinPress: one colour, its iterations t as the dash and marker (the CoinPress and IOME papers'
    # figures), and as a baseline on our Gaussian data
    **{f"CoinPress-t{t}": MechanismStyle("CoinPress (MVMRec, identity covariance)", COINPRESS, variant=("steps", t))
       for t in (1, 2, 3, 4, 5, 10)},
    "CoinPress": MechanismStyle("CoinPress, covariance assumed: the largest variance \u00d7 I", COINPRESS, marker="D"),
    # CoinPress with a private covariance first (MVCRec, then MVMRec: the IOME paper's MVCRec-MVMRec)
    **{f"MVCRec-MVMRec-t{t}": MechanismStyle("CoinPress with its private covariance (MVCRec-MVMRec)", MVCREC,
                                             variant=("steps", t)) for t in (1, 2, 3, 4, 5)},
    # the IOME paper's own estimators: Shifted-CM is IOME run with the IOME paper's settings
    "Shifted-CM": MechanismStyle("Shifted-CM (IOME, the IOME paper's settings)", ORANGE),
    "CM": MechanismStyle("CM (clipped mean, no rotation or shift)", "#8C564B"),
    # IOME Figure 9: the clipped mean at an exact (non-private) threshold
    **{f"CM-exact-q{round(100 * q)}": MechanismStyle("clipped mean, exact threshold at a fixed quantile", "#DDAA33",
                                                    variant=("quantile", q)) for q in (0.5, 0.75, 0.85, 0.95)},
    "CM-exact-optimal": MechanismStyle("clipped mean, exact threshold at the IOME paper's quantile", "#5D3A9B"),
    # the local model (IOME Figures 10-12): the IOME paper's three-round Shifted-CM in its colour, and
    # Gaboardi, Rogers and Sheffet's 1-D means run coordinate by coordinate
    "Shifted-CM-local": MechanismStyle("Shifted-CM, local model (three rounds)", ORANGE),
    "KnownVar": MechanismStyle("KnownVar (GRS, given sigma)", "#7570B3"),
    "UnkVar": MechanismStyle("UnkVar (GRS, sigma in [0.1, R])", "#66A61E"),
    "CoinPress-oracle": MechanismStyle("CoinPress, true covariance (oracle)", "#6699CC", marker="P"),
    "CoinPress-private-covariance": MechanismStyle("CoinPress, its private covariance first (MVCRec t = 3)", MVCREC,
                                                    marker="v"),
    # CoinPress's private covariance itself (its own reproduction): the authors' code form, the consistent form
    **{f"CoinPress-cov-t{t}": MechanismStyle("CoinPress covariance, the authors' code form", "#994455",
                                             variant=("steps", t)) for t in (1, 2, 3, 4, 5)},
    **{f"CoinPress-cov-consistent-t{t}": MechanismStyle("CoinPress covariance, the consistent form", MVCREC,
                                                        variant=("steps", t)) for t in (1, 2, 3, 4, 5)},
    "empirical_covariance": MechanismStyle("Sample covariance (non-private)", BLACK),
    # PLAN beside the DP libraries (docs/design.md §6.1): one colour per library and recipe, the same
    # on Gaussian and binary data (where every item's range (0, 1) is the libraries' bounds)
    "PLAN-as-published": MechanismStyle("PLAN as published (spends about 3.76 \u03c1)", BLUE, marker="s"),
    **_library_styles("OpenDP", "OpenDP", "#882255", "#EE3377", ("X", "x")),
    **_library_styles("diffprivlib", "diffprivlib (IBM)", "#117733", "#999933", ("h", "H")),
    **_library_styles("python-dp", "python-dp (Google)", "#661100", "#33BBEE", ("*", "p"),
                      "our two-pass with its deprecated Percentile (superseded)"),
    # the recipe python-dp documents for unknown bounds, and the superseded OpenDP candidates (§6.1)
    **{f"python-dp{suffix}-automatic": MechanismStyle("python-dp (Google), its automatic bounds", "#DDCC77", marker="<")
       for suffix in ("", "-binary")},
    "OpenDP-two-pass-even": MechanismStyle("OpenDP, our two-pass with 1024 evenly spaced candidates (superseded)",
                                           "#EE99AA", marker=">"),  # a pale tint of OpenDP's two-pass
    # the privacy audit's power curves (the user-level Laplace mechanism is "Laplace" above)
    "gaussian_step": MechanismStyle("Gaussian step (PLAN's last step)", "#332288"),
    "exponential_quantile": MechanismStyle("exponential-mechanism quantile", "#AA4499"),
}
# Names that are one mechanism under different labels, drawn in its colour (names with the same
# label, e.g. PLAN and PLAN-binary or a family's members, are one mechanism anyway); no other two
# names share a colour.
SAME_MECHANISM = (
    {"PLAN", "PLAN-as-published"},
    {"IOME", "Shifted-CM", "Shifted-CM-local"},  # Shifted-CM: IOME run with the IOME paper's settings
    {"empirical_mean", "empirical_covariance"},  # the non-private sample statistics
    {"coordinate_median", "PLAN-binary-noscale"},  # the paper's "PLAN without scaling" curve
    {"CoinPress", *(f"CoinPress-t{t}" for t in (1, 2, 3, 4, 5, 10))},
    {"CoinPress-private-covariance", *(f"MVCRec-MVMRec-t{t}" for t in (1, 2, 3, 4, 5)),
     *(f"CoinPress-cov-consistent-t{t}" for t in (1, 2, 3, 4, 5))},  # the consistent MVCRec, then MVMRec
)
FALLBACK_COLORS = ("#882255", "#117733", "#332288", "#AA4499", "#44AA99", "#999933", "#661100", "#6699CC")
# (the audit's Gaussian step and exponential quantile above take two of them that no configured
# mechanism falls back to; the palette itself is unchanged, so every fallback colour stays)


@dataclass(frozen=True)
class LineStyle:
    """Dash pattern and marker of one value of a series parameter (rho, or ratio)."""

    dashes: object  # a matplotlib linestyle
    marker: str


# The paper's Gaussian figures show rho = 1/8 and 1: the two most distinct styles.
RHO_STYLES = {
    1.0: LineStyle("-", "o"),
    0.125: LineStyle((0, (5, 2.5)), "s"),
    0.5: LineStyle("-.", "^"),
    0.25: LineStyle(":", "D"),
    0.0625: LineStyle((0, (6, 2, 1, 2, 1, 2)), "v"),
    0.01: LineStyle((0, (9, 3)), "P"),
}
RATIO_STYLES = {
    1.0: LineStyle("-", "o"),
    0.5: LineStyle((0, (5, 2.5)), "s"),
    0.25: LineStyle(":", "^"),
    0.75: LineStyle("-.", "D"),
    0.0: LineStyle((0, (6, 2, 1, 2, 1, 2)), "v"),
}
# the privacy audit's power curves: break 1 (the correct mechanism) solid, the larger breaks dashed
BREAK_STYLES = {
    1.0: LineStyle("-", "o"),
    1.25: LineStyle((0, (5, 2.5)), "s"),
    1.5: LineStyle("-.", "^"),
    2.0: LineStyle(":", "D"),
    4.0: LineStyle((0, (6, 2, 1, 2, 1, 2)), "v"),
}
SERIES_STYLES = {"rho": RHO_STYLES, "ratio": RATIO_STYLES, "break": BREAK_STYLES}
# a family's option (MechanismStyle.variant): CoinPress's iterations t, a clipping quantile
STEPS_STYLES = {
    1.0: LineStyle((0, (1, 1.5)), "v"),
    2.0: LineStyle((0, (5, 2.5)), "s"),
    3.0: LineStyle("-.", "^"),
    4.0: LineStyle((0, (2, 1.2)), "D"),
    5.0: LineStyle((0, (6, 2, 1, 2, 1, 2)), "P"),
    10.0: LineStyle("-", "o"),
}
QUANTILE_STYLES = {
    0.5: LineStyle((0, (1, 1.5)), "v"),
    0.75: LineStyle((0, (5, 2.5)), "s"),
    0.85: LineStyle("-.", "^"),
    0.95: LineStyle((0, (2, 1.2)), "D"),
}
VARIANT_STYLES = {"steps": STEPS_STYLES, "quantile": QUANTILE_STYLES}
VARIANT_LABELS = {"steps": "CoinPress iterations t", "quantile": "clipping quantile"}
FALLBACK_LINESTYLES = (
    LineStyle((0, (3, 1, 1, 1)), "X"), LineStyle((0, (1, 1)), "h"), LineStyle((0, (8, 2, 2, 2)), "*"),
    LineStyle((0, (4, 4)), "<"), LineStyle((0, (2, 3)), ">"), LineStyle((0, (10, 2, 1, 2)), "p"),
)
SERIES_LABELS = {"rho": r"budget $\rho$", "ratio": "share of $p = 1/2$ items", "eps": r"$\varepsilon$",
                 "break": "break (the mechanism runs at its claim \u00d7 break)"}


def _stable_index(text: str, size: int) -> int:
    return zlib.crc32(text.encode("utf-8")) % size


def mechanism_style(mechanism: str) -> MechanismStyle:
    """The mechanism's label and colour: listed, or a fallback colour by a stable hash of its name."""
    if mechanism in MECHANISM_STYLES:
        return MECHANISM_STYLES[mechanism]
    return MechanismStyle(mechanism, FALLBACK_COLORS[_stable_index(mechanism, len(FALLBACK_COLORS))])


def series_style(parameter: str, value: float) -> LineStyle:
    """Dash and marker of one value of a series parameter (rho: ``RHO_STYLES``)."""
    return _table_style(SERIES_STYLES.get(parameter, {}), parameter, value)


def variant_style(option: str, value: float) -> LineStyle:
    """Dash and marker of one member of a family (``MechanismStyle.variant``: ``VARIANT_STYLES``)."""
    return _table_style(VARIANT_STYLES.get(option, {}), option, value)


def _table_style(table, parameter: str, value: float) -> LineStyle:
    for known, style in table.items():
        if math.isclose(known, float(value), rel_tol=1e-9, abs_tol=1e-15):
            return style
    return FALLBACK_LINESTYLES[_stable_index(f"{parameter}={float(value)!r}", len(FALLBACK_LINESTYLES))]


def format_rho(rho: float) -> str:
    """``1/8`` for powers of two below one, ``2`` for those above, otherwise ``0.01``."""
    mantissa, exponent = math.frexp(rho)
    if mantissa == 0.5:
        return f"1/{2 ** (1 - exponent)}" if exponent < 1 else f"{2 ** (exponent - 1)}"
    return f"{rho:g}"


def variant_value_text(option: str, value: float) -> str:
    """A family member's option as the legend writes it: ``10``, ``95 %``."""
    return f"{100 * value:g} %" if option == "quantile" else f"{value:g}"


def series_value_text(parameter: str, value: float) -> str:
    """A series value as the legend writes it under its parameter's header: ``1/8``, ``0.01``."""
    return format_rho(value) if parameter in ("rho", "ratio") else f"{value:g}"
