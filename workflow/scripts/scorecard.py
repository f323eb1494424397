import os
import sys

sys.stderr = open(snakemake.log[0], "a", buffering=1)  # first: a failing job's traceback lands in its log
from experiments.engine.joblog import console_errors

console_errors(snakemake.log[0])  # and a failure's last line on the console

from experiments.jobs.results import scorecard_job

figures = list(snakemake.input.figures)
table2 = list(snakemake.input.table2)  # the table under the authors' protocol, then its erratum if configured
produced = figures + [path.removesuffix(".png") + ".pdf" for path in figures] + table2
metrics = {experiment: metric for figure in snakemake.params.metrics.values() for experiment, metric in figure.items()}
illustrations = {os.path.basename(path).removesuffix(".csv"): path for path in snakemake.input.illustrations}
scorecard_job(config=snakemake.config, summaries=list(snakemake.input.summaries), published=snakemake.input.published,
              quoted=snakemake.input.quoted, published_values=list(snakemake.input.published_values),
              statuses=list(snakemake.input.statuses), produced=produced,
              output=snakemake.output.scorecard, values_output=snakemake.output.values,
              claims_output=snakemake.output.claims, log=snakemake.log[0], metrics=metrics,
              extra_figures=dict(snakemake.params.extra_figures), illustrations=illustrations,
              table2=table2[0] if table2 else None, authors_code=next(iter(snakemake.input.authors_code), None))
