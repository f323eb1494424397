import sys

sys.stderr = open(snakemake.log[0], "a", buffering=1)  # first: a failing job's traceback lands in its log
from experiments.engine.joblog import console_errors

console_errors(snakemake.log[0])  # and a failure's last line on the console

from experiments.jobs.results import fidelity_job

fidelity_job(summary=snakemake.input.summary, reference=snakemake.input.reference, names=snakemake.params.names,
             output=snakemake.output[0], log=snakemake.log[0], agreement=snakemake.params.agreement,
             required_share=snakemake.params.required_share, measure=snakemake.params.measure,
             reference_experiment=snakemake.params.reference_experiment)
