# One job per cell; the trials of a cell loop inside the job (DESIGN.md 3).


rule run_cell:
    output:
        "results/{experiment}/cells/{cell}.csv",
    params:
        # Everything the cell's results depend on: editing it reruns exactly this cell.
        spec=lambda w: EXPERIMENTS[w.experiment].fingerprint(EXPERIMENTS[w.experiment].cell(w.cell)),
        seed=config["seed"],
    conda:
        "../../environment.yml"
    log:
        "logs/{experiment}/cells/{cell}.log",
    benchmark:
        "results/{experiment}/benchmarks/{cell}.tsv"
    priority: cell_priority
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    script:
        "../scripts/run_cell.py"
