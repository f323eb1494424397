"""What several test packages share: workflow runs in temporary folders, report inputs, the import graph."""
