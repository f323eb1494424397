"""What several test packages share: workflow runs in temporary folders, report inputs, the
scorecard's synthetic inputs, the import graph."""
