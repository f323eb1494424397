"""Writes workflow/envs/plan.yaml, the conda environment every rule names (`conda:`), from requirements.lock.

`make lock` runs it after writing the lock, `make envs` on its own (no network: it only reads the lock).
The file asks conda for the lock's Python (from the lock's header) and pip, then lists every package of
the lock inline under `pip:` at its exact version, so that the copy Snakemake makes of it for
`snakemake --use-conda` (.snakemake/conda/<hash>.yaml) is self-contained: no `-r` path that would name
nothing beside the copy. Only the standard library is used, so any Python 3 can run it.

    python3 scripts/conda_env.py [--lock requirements.lock] [--output workflow/envs/plan.yaml]
"""

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[A-Za-z0-9.+!-]+)$")
LOCK_PYTHON = re.compile(r"^# Python (?P<version>\d+\.\d+\.\d+) ")

HEADER = """\
# The software of every rule (`conda:` in workflow/rules/*.smk), deployed by `snakemake --use-conda`
# (docs/deployment.md). Generated from {lock} by `make envs` (and by `make lock`): never edit it
# by hand. conda provides the lock's Python and pip; pip then installs every package of the lock at
# its exact version, listed here rather than read from the lock, so that the copy Snakemake makes of
# this file is complete on its own. Without --use-conda, Snakemake only reads this file (it records
# its text with each output) and never calls conda.
"""


def read_lock(path):
    """The lock's Python version (header) and its pins, in the lock's order."""
    python = None
    pins = []
    for line in Path(path).read_text().splitlines():
        if match := LOCK_PYTHON.match(line):
            if python is not None:
                raise ValueError(f"{path} names its Python twice")
            python = match["version"]
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        if not PIN.match(text):
            raise ValueError(f"{path}: not an exact '==' pin: {text!r}")
        pins.append(text)
    if python is None:
        raise ValueError(f"{path} does not name the Python it was generated with (header '# Python X.Y.Z ...')")
    if not pins:
        raise ValueError(f"{path} pins no package")
    return python, pins


def environment_text(python, pins, lock_name="requirements.lock"):
    lines = [HEADER.format(lock=lock_name).rstrip("\n"), "channels:", "  - conda-forge", "dependencies:"]
    lines += [f"  - python={python}", "  - pip", "  - pip:"]
    lines += [f"      - {pin}" for pin in pins]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lock", default=ROOT / "requirements.lock", type=Path)
    parser.add_argument("--output", default=ROOT / "workflow" / "envs" / "plan.yaml", type=Path)
    args = parser.parse_args(argv)
    try:
        python, pins = read_lock(args.lock)
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    args.output.parent.mkdir(parents=True, exist_ok=True)
    temporary = args.output.with_name(args.output.name + ".tmp")
    temporary.write_text(environment_text(python, pins, args.lock.name))
    temporary.replace(args.output)
    print(f"wrote {args.output}: Python {python} and {len(pins)} packages of {args.lock.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
