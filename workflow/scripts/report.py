import sys

sys.stderr = open(snakemake.log[0], "a", buffering=1)  # first: a failing job's traceback lands in its log
from experiments.engine.joblog import console_errors

console_errors(snakemake.log[0])  # and a failure's last line on the console

from experiments.engine.availability import not_reproduced, read_status
from experiments.jobs.results import report_job

missing = not_reproduced([read_status(path) for path in snakemake.input.dataset_statuses],
                         snakemake.params.dataset_experiments, snakemake.params.dataset_figures)
report_job(config=snakemake.config, summaries=list(snakemake.input.summaries),
           fidelity=list(snakemake.input.fidelity),
           figures=list(snakemake.input.figures) + list(snakemake.input.dataset_figures),
           run_times=snakemake.input.run_times[0], errata_table=snakemake.input.errata_table,
           errata_noscale=snakemake.input.errata_noscale or None, errata_figures=list(snakemake.input.errata_figures),
           tables=list(snakemake.input.tables), not_reproduced=missing, audit=list(snakemake.input.audit) or None,
           audit_power=list(snakemake.input.audit_power) or None, libraries=list(snakemake.input.libraries) or None,
           scorecard=list(snakemake.input.scorecard) or None,
           authors_code=next(iter(snakemake.input.authors_code), None), output=snakemake.output[0],
           log=snakemake.log[0])
