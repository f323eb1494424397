import sys

sys.stderr = open(snakemake.log[0], "a", buffering=1)  # first: a failing job's traceback lands in its log
from experiments.engine.joblog import console_errors

console_errors(snakemake.log[0])  # and a failure's last line on the console

from experiments.jobs.results import run_times_job

run_times_job(benchmarks=list(snakemake.input), output=snakemake.output[0], log=snakemake.log[0])
