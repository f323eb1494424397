# Runs every trial of one cell. One BLAS thread per job: set before numpy loads.
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", str(snakemake.threads))
os.environ.setdefault("OMP_NUM_THREADS", str(snakemake.threads))

from experiments.jobs import run_cell_job  # noqa: E402

run_cell_job(
    config=snakemake.config,
    experiment=snakemake.wildcards.experiment,
    cell=snakemake.wildcards.cell,
    output=snakemake.output[0],
    log=snakemake.log[0],
)
