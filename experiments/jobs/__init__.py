"""Every entry point the Snakemake scripts (workflow/scripts/*.py) call: each ``*_job`` reads its
inputs, calls the computation (which lives in the other modules of :mod:`experiments`), writes its
outputs atomically and logs what it did. One module per kind of job, so that a job imports only
what it needs:

- :mod:`.runs`: ``run_cells_job``, ``run_shard_job``, ``summarise_job``;
- :mod:`.data`: ``fetch_dataset_job``, ``parse_dataset_job`` (the real datasets);
- :mod:`.figures`: ``figure_job``, ``figure2_job``, ``worst_case_job``, ``illustration_job``;
- :mod:`.audit`: ``audit_job``, ``audit_table_job``, ``audit_figure_job``, and the power curves'
  ``power_job``, ``power_table_job``, ``power_figure_job``;
- :mod:`.results`: ``fidelity_job``, ``errata_job``, ``table2_job``, ``table2_erratum_job``,
  ``scorecard_job``, ``report_job``.
"""
