"""The figures drawn from a run's results, one module per family:

- :mod:`.paper`: the config-driven figures (``figures.<name>`` in the config), drawn from the
  experiment summaries as the papers drew them; the PLAN paper's, the user-level paper's and our
  extended ones;
- :mod:`.dataset_variances`: PLAN Figure 2, the real datasets' per-item variances;
- :mod:`.worst_case`: the user-level paper's analytic worst-case errors;
- :mod:`.audit`: the privacy audit's claimed and found eps;
- :mod:`.common`: panel sizes, axis labels, and writing a figure (reproducible bytes, atomically).

Colours, dashes and markers come from :mod:`experiments.outputs.styles`; the jobs that write the figures
are in :mod:`experiments.jobs`.
"""
import matplotlib

matplotlib.use("Agg")  # no display; must precede any pyplot import anywhere in the process
