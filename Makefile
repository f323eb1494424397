# Pip route: everything runs from .venv, built from requirements.txt on first use.
PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python

.PHONY: venv figures test lint test-cluster bench cost clean-venv

venv: $(VENV)/.installed

# Re-runs whenever the pins, the metadata or the set of packages change: the editable install
# only maps the top-level packages that exist when it runs. setuptools is pinned in
# requirements.txt, so the editable install needs no isolated (downloaded) build environment.
$(VENV)/.installed: requirements.txt pyproject.toml $(wildcard mechanisms/__init__.py datasets/__init__.py experiments/__init__.py)
	@$(PYTHON) -c 'import sys; v = sys.version_info; sys.exit(0 if v >= (3, 11) else "error: Python >= 3.11 is required, but $(PYTHON) is %d.%d; run e.g. make PYTHON=python3.11" % v[:2])'
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -r requirements.txt
	$(VPY) -m pip install --no-deps --no-build-isolation -e .
	touch $@

figures: venv
	$(VENV)/bin/snakemake --cores all

test: venv
	$(VPY) -m pytest

# ruff's rules are in pyproject.toml; `$(VENV)/bin/snakefmt Snakefile workflow/` formats.
lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/snakefmt --check Snakefile workflow/

# A real single-node Slurm (scripts/slurm-local.sh: root, apt-get) runs the smoke config and the
# fault tests through profiles/slurm, then is stopped (tests/cluster/; about 15 minutes).
test-cluster: venv
	$(VPY) -m pytest -m cluster tests/cluster

bench: venv
	$(VPY) benchmarks/bench_mechanisms.py
	$(VPY) benchmarks/bench_parsing.py

# README "Cost of a full reproduction" from the committed per-job measurements of the full run.
cost: venv
	$(VPY) benchmarks/cost_table.py --from-jobs results/cost/jobs.csv

clean-venv:
	rm -rf $(VENV)
