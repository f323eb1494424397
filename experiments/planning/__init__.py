"""What Snakemake runs, worked out from the config before any job starts: the run's plan the rule
files read as ``RUN`` (:mod:`.run_plan`): the config's selection (:mod:`.selection`) and its parts
by concern, the targets (:mod:`.targets`), the trial jobs and their shards (:mod:`.trial_jobs`,
:mod:`.shards`), every job's request (:mod:`.resources`), the real datasets (:mod:`.real_data`)
and the report's inputs (:mod:`.report_inputs`); every path template (:mod:`.paths`); the
cluster's messages (:mod:`.cluster`) and the config's checks against the schema
(:mod:`.validation`)."""
