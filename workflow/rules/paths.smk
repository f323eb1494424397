# Used as a module (docs/deployment.md), the workflow runs in a deployment's own folder, where
# config paths are relative to that folder too. The papers' published numbers (config/reference/)
# belong to the workflow, not to a deployment's config: a reference path of the config (fidelity
# references, Table 2's reference, the scorecard's published, quoted, authors_code and published_values files)
# that names no file in the working directory is read from the workflow's own copy, at the same
# path relative to this repository's root (a local module; a workflow read from a repository
# host has no such file on disk, and a deployment of it copies config/ as snakedeploy does). In
# the repository itself, or in a deployment that copied config/, every such path names a file in
# the working directory and is left as it is.
import os

from snakemake.sourcecache import LocalSourceFile

# the repository root: two levels above this file
_WORKFLOW_ROOT = workflow.current_basedir.join("../..")


def workflow_reference(path):
    """``path`` if it names a file in the working directory (or is absolute, or not a string),
    else the workflow's own file at that path relative to the repository root, if there is one."""
    if not isinstance(path, str) or os.path.isabs(path) or os.path.exists(path):
        return path
    if not isinstance(_WORKFLOW_ROOT, LocalSourceFile):
        return path
    candidate = os.path.normpath(os.path.join(_WORKFLOW_ROOT.get_path_or_uri(secret_free=True), path))
    # else the missing input is reported as such, at the path the config gives
    return candidate if os.path.isfile(candidate) else path


_fidelity = config.get("fidelity")
for _entry in [
    *(_fidelity.values() if isinstance(_fidelity, dict) else []),
    config.get("table2"),
    config.get("scorecard"),
]:
    if isinstance(_entry, dict):
        for _key in ("reference", "published", "quoted", "authors_code"):
            if _key in _entry:
                _entry[_key] = workflow_reference(_entry[_key])
        if isinstance(_entry.get("published_values"), list):
            _entry["published_values"] = [workflow_reference(_path) for _path in _entry["published_values"]]
