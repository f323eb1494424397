"""What Snakemake runs, worked out from the config before any job starts: the workflow plan the
rule files read (:mod:`.workflow_plan`), each job's memory and threads (:mod:`.resources`), how a
cell splits into trial shards (:mod:`.shards`), the cluster's messages (:mod:`.cluster`) and the
config's checks against the schema (:mod:`.validation`)."""
