"""The experiment engine: expands a config into cells, runs trials, writes summaries.

Snakemake rules call into this package through thin scripts (docs/design.md §2, §3);
data sources, metrics and mechanism families plug in through registries, so new kinds of
experiments do not touch the engine.
"""
