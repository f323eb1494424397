"""Everything above the mechanisms and the data: the experiments the workflow runs, in five
packages that import each other downwards only (tests/project/test_import_graph.py):

- :mod:`.audit`: the privacy audits and their power curves (mechanisms alone);
- :mod:`.engine`: a config expanded into cells, the trials of a cell, their summaries;
- :mod:`.outputs`: figures, tables, the scorecard, the errata and the report, drawn from summaries;
- :mod:`.planning`: what Snakemake runs: targets, resources, trial shards, the cluster's messages;
- :mod:`.jobs`: every entry point the Snakemake scripts call.

docs/design.md §3 walks a cell from the config to its figure; docs/architecture-modules.md lists
every module.
"""
