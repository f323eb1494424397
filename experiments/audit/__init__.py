"""The privacy audits (docs/workflow.md#privacy-audit): each mechanism audited in its own privacy measure
(:mod:`.audits`), PLAN audited through its transcript (:mod:`.transcripts`) and the power of the
audit at a given number of runs (:mod:`.power`). Imports the mechanisms only."""
