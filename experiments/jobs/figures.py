"""The figures: the config-driven paper figures, PLAN Figure 2, the user-level worst-case figure
and the illustrations; each job draws, writes PDF and PNG atomically, and logs what it drew."""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from datasets.real import load
from datasets.userlevel import collection_counts

from ..outputs.figures.common import save_figure, write_log
from ..outputs.figures.dataset_variances import item_variances, variance_histograms
from ..outputs.figures.paper import describe, figure_caption, make_figure, read_summaries
from ..outputs.figures.worst_case import worst_case_figure
from ..outputs.illustrations import draw, save


def figure_job(*, spec: Mapping, summaries: Sequence[str | os.PathLike], pdf, png, log,
               metrics: Mapping | None = None) -> None:
    """A config figure (workflow/rules/figures.smk): read ``summaries``, draw ``spec``, write
    ``pdf`` and ``png`` atomically and a short description to ``log``."""
    summary = read_summaries(summaries)
    fig, plans = make_figure(spec, summary, metrics)
    save_figure(fig, pdf, png)
    write_log(log, describe(plans, spec) + [f"caption: {figure_caption(spec, plans)}", f"wrote {pdf} and {png}"])


def figure2_job(*, datasets: Sequence[str], inputs: Sequence[str | os.PathLike], pdf, png, log) -> None:
    """PLAN Figure 2 from the processed datasets (workflow/rules/datasets.smk)."""
    matrices = {name: load(name, processed_dir=Path(path).parent)[0] for name, path in zip(datasets, inputs)}
    save_figure(variance_histograms(matrices), pdf, png)
    lines = [f"{name}: n = {x.shape[0]}, D = {x.shape[1]}, items below D^-2/5: "
             f"{int(np.count_nonzero(item_variances(x) < x.shape[1] ** -0.4))}" for name, x in matrices.items()]
    write_log(log, lines + [f"wrote {pdf} and {png}"])


def worst_case_panels(panels: Sequence[Mapping]) -> list[tuple]:
    """What the worst-case figure draws of each of ``panels`` ({title, collection parameters, bound,
    eps, dimensions} of the user-level experiments): (title, users' sample counts, bound, eps, dimensions)."""
    return [(panel["title"], collection_counts(**panel["collection"]), float(panel["bound"]),
             np.asarray(panel["eps"], dtype=float), tuple(panel["dimensions"])) for panel in panels]


def worst_case_job(*, panels: Sequence[Mapping], pdf, png, log) -> None:
    """The analytic worst-case figure of ``panels`` (:func:`worst_case_panels`; workflow/rules/figures.smk)."""
    planned = worst_case_panels(panels)
    save_figure(worst_case_figure(planned), pdf, png)
    write_log(log, [f"{title}: {len(counts)} users, {int(counts.sum())} samples, {len(eps)} eps values"
                    for title, counts, _, eps, _ in planned] + [f"wrote {pdf} and {png}"])


def illustration_job(*, name: str, spec: Mapping, seed: int, pdf, png, csv, log) -> None:
    """An illustration (workflow/rules/illustrations.smk): draw ``name``, write its PDF, PNG and
    CSV, and log the numbers it shows."""
    illustration = draw(name, spec, seed=seed)
    save(illustration, pdf=pdf, png=png, csv=csv)
    write_log(log, [*illustration.lines, f"wrote {pdf}, {png} and {csv}"])
