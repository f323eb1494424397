# Illustrations drawn from the project's own mechanisms (experiments/illustrations.py): PLAN
# paper Figures 1 and 6 and the user-level paper's Figure 1, one job each, for the entries of
# the config's `illustrations:` section.
from experiments.config import check_illustrations

try:
    ILLUSTRATIONS = check_illustrations(config)
except Exception as error:
    raise ConfigError(one_line_config_error(error)) from None


# the PDF, PNG and CSV of every configured illustration (static_targets() in common.smk)
ILLUSTRATION_TARGETS = [
    path
    for name in ILLUSTRATIONS
    for path in (f"figures/{name}.pdf", f"figures/{name}.png", f"results/illustrations/{name}.csv")
]


rule illustration:
    output:
        pdf="figures/{illustration}.pdf",
        png=report(
            "figures/{illustration}.png",
            caption="../report/illustration.rst",
            category="Illustrations",
            subcategory="{illustration}",
        ),
        csv=report(
            "results/illustrations/{illustration}.csv",
            caption="../report/illustration_data.rst",
            category="Illustrations",
            subcategory="{illustration}",
        ),
    log:
        "logs/illustrations/{illustration}.log",
    wildcard_constraints:
        illustration="|".join(map(re.escape, ILLUSTRATIONS)) or "(?!)",
    conda:
        "../envs/plan.yaml"
    threads: 1
    resources:
        mem_mb=SMALL_JOB_MEM_MB,
        runtime=SMALL_JOB_RUNTIME,
    params:
        spec=lambda w: ILLUSTRATIONS[w.illustration],
        seed=config["seed"],
    script:
        "../scripts/illustration.py"
