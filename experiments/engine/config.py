"""Experiments from a validated config: specs, cells and their ids (docs/design.md §3, §6).

It stays one module of about 650 lines because it is the config's one semantic check: every check
a schema cannot make (experiments, mechanisms and plug-ins, audits, illustrations, Table 2) is here,
so that each problem is found before any cell runs and reported the same way.

The JSON schema (workflow/schemas/config.schema.yaml) checks the shape of the config;
this module checks what a schema cannot: that mechanisms (plug-ins included: they are loaded
and their signatures checked here, before any cell runs), their options, the data source's
parameters and the audits exist. Every problem is one ``ConfigError`` line naming the key.
"""
from __future__ import annotations

import dataclasses
import inspect
import itertools
import json
from dataclasses import dataclass

import numpy as np

import mechanisms
from datasets import Sample
from datasets.images import DIGITS, PIXELS, SUBSETS, mnist_shaped_size
from datasets.real import REAL_DATASETS
from mechanisms import BUDGET_NAMES

from .metrics import BATCHED_METRICS, METRICS
from .sources import DATA_SOURCES, REAL_DATASET_SOURCES, real_dataset_of, source_defaults, source_parameters
from .summary import NON_GRID_COLUMNS

# Columns of the cell and summary tables besides the grid's: a grid parameter of the same name
# (e.g. a source's ``mean``, or ``std``) would collide with them.
RESERVED_COLUMNS = NON_GRID_COLUMNS | {"trial", "error", "error_vs_empirical", "runtime_s"}

DEFAULT_BATCH_SIZE = 10_000  # runs per batch: one call per mechanism and budget value
# What the engine supplies for an option without a default (experiments/engine/trials.py): the sample's
# statistic of that name (``true_std`` for ``std``), or a generator for randomness that must not
# depend on rho (IOME's rotation).
SAMPLE_STATISTICS = tuple(f.name.removeprefix("true_") for f in dataclasses.fields(Sample)
                          if f.name.startswith("true_"))
RHO_FREE_STREAMS = ("rotation_rng",)


class ConfigError(ValueError):
    """A config problem, reported as one line that names the offending key."""


@dataclass(frozen=True)
class MechanismSpec:
    name: str
    algorithm: str
    options: tuple  # sorted (option, value) pairs: hashable and stable

    def options_dict(self) -> dict:
        return dict(self.options)


@dataclass(frozen=True)
class ExperimentSpec:
    id: str
    source: str
    data: tuple  # sorted (parameter, value) pairs fixed for every cell
    grid: tuple  # (parameter, values) in canonical order (canonical_grid_order)
    trials: int
    metric: str
    mechanisms: tuple  # MechanismSpec, in config order
    share_rho: bool = False  # one job runs every budget value of a setting (see settings())
    # the data's expected size where the source's parameters do not state it, for work() and the job's
    # resources: (d, n) and nonzeros pairs of a real dataset, from its expect; (d, n) of an image subset
    size_hint: tuple = ()
    budget: str = "rho"  # the mechanisms' budget: rho (zCDP) or eps (pure DP)
    batch_size: int | None = None  # runs drawn and evaluated per call (batched families), else None
    fixed_data: bool = False  # every trial of a setting sees one sample, drawn once (trials.fixed_data_generator)
    extra_metrics: tuple = ()  # further errors of the same estimates: columns error_<metric> (trials.py)
    # How its jobs split into trial shards (experiments/planning/shards.py); never part of the fingerprint:
    # the results do not depend on it.
    shards: int | None = None  # the number of jobs per cell or setting, else derived from:
    shard_seconds: float | None = None  # its target job length (None: the config's shard_seconds)

    @property
    def cell_suffix(self) -> str:
        """Batched experiments keep every run (10^4 per cell): their cell files are compressed."""
        return ".csv" if self.batch_size is None else ".csv.gz"

    @property
    def dataset(self) -> str | None:
        """The real dataset (config ``datasets:``) the experiment reads, if any."""
        return real_dataset_of(self.source, self.data)

    @property
    def empirical_mechanism(self) -> str | None:
        """The name of the experiment's non-private empirical mean, if it runs one (the reference
        of the error relative to the empirical mean, experiments/engine/summary.py)."""
        return next((m.name for m in self.mechanisms if m.algorithm == "empirical_mean"), None)

    @property
    def grid_names(self) -> list[str]:
        return [name for name, _ in self.grid]

    @property
    def setting_names(self) -> list[str]:
        """The grid parameters other than the budget: a setting is one value of each."""
        return [name for name in self.grid_names if name not in BUDGET_NAMES]

    def settings(self) -> dict[str, list[Cell]]:
        """The cells grouped by setting (``Cell.setting_id``), in grid order. A trial draws
        the same data for every rho of a setting, so with ``share_rho`` one job runs them
        all and its mechanisms share their rho-independent work (a cache: the results are
        those of one job per cell)."""
        groups: dict[str, list[Cell]] = {}
        for cell in self.cells():
            groups.setdefault(cell.setting_id, []).append(cell)
        return groups

    def cells(self) -> list[Cell]:
        names = self.grid_names
        return [
            Cell(experiment=self.id, params=tuple(zip(names, values)))
            for values in itertools.product(*(values for _, values in self.grid))
        ]

    def cell(self, cell_id: str) -> Cell:
        for cell in self.cells():
            if cell.id == cell_id:
                return cell
        raise ConfigError(f"experiments.{self.id}: no cell {cell_id!r} in its grid")

    def fingerprint(self, cell: Cell) -> str:
        """Everything a cell's results depend on, as stable JSON (a Snakemake param: a
        change reruns exactly the affected cells; a new grid value leaves others alone)."""
        return json.dumps(
            {
                "source": self.source,
                "data": dict(self.data),
                "cell": dict(cell.params),
                "trials": self.trials,
                "metric": self.metric,
                "mechanisms": [[m.name, m.algorithm, dict(m.options)] for m in self.mechanisms],
                # only where set, so the fingerprints of per-trial experiments stay as they were
                **({"batch_size": self.batch_size} if self.batch_size is not None else {}),
                **({"fixed_data": True} if self.fixed_data else {}),
                **({"extra_metrics": list(self.extra_metrics)} if self.extra_metrics else {}),
                **({"plugin_sources": sources} if (sources := self.plugin_sources()) else {}),
            },
            sort_keys=True,
        )

    def plugin_sources(self) -> dict[str, str]:
        """Mechanism name -> the SHA-256 of its plug-in's source file, for the mechanisms that are
        plug-ins with a file (docs/configuration.md): editing the file reruns their cells."""
        return {m.name: digest for m in self.mechanisms if (digest := mechanisms.source_digest(m.algorithm))}

    def work(self, cell: Cell) -> float:
        """Relative cost of a cell: trials x mechanisms x n x d (a parameter that the source
        does not take counts as 1). Only its order matters: jobs start largest first, so the
        last jobs of a run are short and no core idles long at the end."""
        params = {**source_defaults(self.source), **dict(self.size_hint), **dict(self.data), **dict(cell.params)}
        size = float(params.get("n", 1)) * float(params.get("d", 1))
        return self.trials * len(self.mechanisms) * size


@dataclass(frozen=True)
class Cell:
    experiment: str
    params: tuple  # (parameter, value) in canonical grid order

    @property
    def id(self) -> str:
        """Readable and stable, e.g. ``d=1024_rho=0.25``: the parameters in canonical order
        (data parameters by name, the budget last), whatever the order of the YAML keys."""
        return "_".join(f"{name}={format_value(value)}" for name, value in self.params)

    @property
    def setting_id(self) -> str:
        """The id without the budget, e.g. ``d=1024`` ("" for a grid of the budget alone): the
        key of the randomness that does not depend on it (the trial's data, IOME's rotation)."""
        return "_".join(f"{name}={format_value(value)}" for name, value in self.params if name not in BUDGET_NAMES)

    @property
    def budget(self) -> float:
        """The cell's privacy budget: its rho (zCDP) or eps (pure DP)."""
        return float(next(value for name, value in self.params if name in BUDGET_NAMES))


def canonical_grid_order(names) -> list[str]:
    """Grid parameters in the order of cell ids and summary columns: the data parameters
    sorted by name, then the budget (``rho`` or ``eps``). A YAML tool may reorder the keys of a
    grid; the cells, their seeds and the result files stay the same."""
    return sorted(name for name in names if name not in BUDGET_NAMES) + [name for name in BUDGET_NAMES if name in names]


def format_value(value) -> str:
    """1 and 1.0 give "1"; 0.125 gives "0.125": ids do not depend on how YAML typed a number."""
    number = float(value)
    return str(int(number)) if number.is_integer() else repr(number)


def load_experiments(config: dict) -> dict[str, ExperimentSpec]:
    """Experiment specs of a schema-valid config; raises ConfigError on semantic problems."""
    variants = config.get("variants", {})
    for name, variant in variants.items():
        _check_variant(f"variants.{name}", variant)
    return {
        experiment_id: _experiment(experiment_id, entry, variants, config.get("datasets") or {})
        for experiment_id, entry in (config.get("experiments") or {}).items()
    }


def _real_dataset_size(where, source, data, grid, datasets) -> tuple:
    """Checks an experiment on a real dataset and returns the dataset's expected (n, d) (an image
    dataset: of the subset the experiment reads)."""
    if "dataset" in grid:
        raise ConfigError(f"{where}.grid.dataset: a real dataset is fixed per experiment; set data.dataset")
    name = real_dataset_of(source, data)
    if name not in datasets:
        raise ConfigError(f"{where}.data.dataset: {name!r} is not configured under datasets: "
                          f"(configured: {sorted(datasets)})")
    kind = REAL_DATASET_SOURCES[source]
    if getattr(REAL_DATASETS.get(name), "kind", None) != kind:
        readable = sorted(dataset for dataset, entry in REAL_DATASETS.items() if entry.kind == kind)
        raise ConfigError(f"{where}.data.dataset: data source {source!r} reads the {kind} datasets ({readable}),"
                          f" not {name!r}")
    expect = {key: value for key, value in (datasets[name].get("expect") or {}).items() if value is not None}
    if kind == "images":
        return _image_subset_size(source, data, grid, expect)
    shape = tuple((key, expect[key]) for key in ("d", "n") if key in expect)
    # the matrix's nonzeros (occurrences; tokens count duplicates, an upper bound), for its job's memory
    nonzeros = expect.get("occurrences", expect.get("tokens"))
    return shape + ((("nonzeros", nonzeros),) if nonzeros is not None else ())


def _image_subset_size(source, data, grid, expect) -> tuple:
    """(d, n) of the largest image subset an experiment of ``source`` reads (its digits and split,
    fixed or in the grid) where known: MNIST's from the expected counts (per digit, of the train
    split, of the whole set), the stand-in's from its class sizes; d = 784 for the stand-in."""
    settings = {**source_defaults(source), **data}
    digits = list(grid["digit"]) if "digit" in grid else [settings.get("digit")]
    split = settings.get("split", "all") if "split" not in grid else "all"  # a grid of splits: the largest
    known = split in SUBSETS and all(digit is None or (isinstance(digit, int) and not isinstance(digit, bool)
                                                       and 0 <= digit < DIGITS) for digit in digits)
    if source == "mnist_shaped":
        return (("d", PIXELS), ("n", max(mnist_shaped_size(digit=digit, split=split) for digit in digits))) \
            if known else ()
    # a digit's images in one split are at most its images in both (label_counts): an upper bound
    counts = (expect.get("train_label_counts") if split == "train" else None) or expect.get("label_counts")
    if known and None not in digits and counts is not None:
        rows = max(counts[digit] for digit in digits)
    elif known and split == "train" and "n_train" in expect:
        rows = expect["n_train"]
    else:
        rows = expect.get("n")
    return tuple((key, value) for key, value in (("d", expect.get("d")), ("n", rows)) if value is not None)


def _experiment(experiment_id, entry, variants, datasets) -> ExperimentSpec:
    where = f"experiments.{experiment_id}"
    data = dict(entry["data"])
    source = data.pop("source")
    if source not in DATA_SOURCES:
        raise ConfigError(f"{where}.data.source: unknown data source {source!r}; known: {sorted(DATA_SOURCES)}")
    specs = [_mechanism(f"{where}.mechanisms[{i}]", item, variants) for i, item in enumerate(entry["mechanisms"])]
    budget = _budget(where, specs)
    grid = [(name, grid_values(f"{where}.grid.{name}", entry["grid"][name]))
            for name in canonical_grid_order(entry["grid"])]
    accepted = source_parameters(source) | {budget}
    for name, _ in grid:
        if name in RESERVED_COLUMNS:
            raise ConfigError(f"{where}.grid.{name}: {name!r} is a column of the result tables; a grid parameter "
                              "cannot have that name (set it under data:)")
        if name not in accepted:
            raise ConfigError(f"{where}.grid.{name}: not a parameter of data source {source!r} "
                              f"(accepted: {sorted(accepted)})")
    for name in data:
        if name not in accepted - {budget}:
            raise ConfigError(f"{where}.data.{name}: not a parameter of data source {source!r}")
        if name in entry["grid"]:
            raise ConfigError(f"{where}.data.{name}: also in the grid; set it in one place")
    missing = source_parameters(source, required_only=True) - set(data) - set(entry["grid"])
    if missing:
        raise ConfigError(f"{where}: data source {source!r} needs {sorted(missing)} in data or grid")
    if budget not in entry["grid"]:
        raise ConfigError(f"{where}.grid: needs a{'n' if budget == 'eps' else ''} {budget} list (the privacy budgets)")
    batch_size = _batch_size(where, entry, specs, source)
    if source in REAL_DATASET_SOURCES:
        size_hint = _real_dataset_size(where, source, data, entry["grid"], datasets)
    elif source == "mnist_shaped":
        size_hint = _image_subset_size(source, data, entry["grid"], {})
    else:
        size_hint = ()
    metric = entry.get("metric", "l2")
    if metric not in METRICS:
        raise ConfigError(f"{where}.metric: unknown metric {metric!r}; known: {sorted(METRICS)}")
    if batch_size is not None and metric not in BATCHED_METRICS:
        raise ConfigError(f"{where}.metric: {metric!r} has no batched form; "
                          f"batched experiments take {sorted(BATCHED_METRICS)}")
    extra_metrics = tuple(entry.get("extra_metrics") or ())
    for index, name in enumerate(extra_metrics):
        if name not in METRICS:
            raise ConfigError(f"{where}.extra_metrics[{index}]: unknown metric {name!r}; known: {sorted(METRICS)}")
        if name == metric:
            raise ConfigError(f"{where}.extra_metrics[{index}]: {name!r} is already the experiment's metric")
    if extra_metrics and batch_size is not None:
        raise ConfigError(f"{where}.extra_metrics: only for per-trial experiments (a batched one keeps one error "
                          "per run)")
    fixed_data = bool(entry.get("fixed_data", False))
    if fixed_data and batch_size is not None:
        raise ConfigError(f"{where}.fixed_data: only for per-trial experiments (batched ones draw a sample per run)")
    if "shards" in entry and "shard_seconds" in entry:
        raise ConfigError(f"{where}: shards and shard_seconds both set; give the number of jobs or their target length")
    names = [spec.name for spec in specs]
    if len(set(names)) != len(names):
        raise ConfigError(f"{where}.mechanisms: duplicate name {next(n for n in names if names.count(n) > 1)!r}")
    return ExperimentSpec(
        id=experiment_id,
        source=source,
        data=tuple(sorted(data.items())),
        grid=tuple((name, tuple(values)) for name, values in grid),
        trials=int(entry["trials"]),
        metric=metric,
        mechanisms=tuple(specs),
        # batched experiments draw each batch once for every budget value: one job per setting
        share_rho=bool(entry.get("share_rho", False)) or batch_size is not None,
        size_hint=size_hint,
        budget=budget,
        batch_size=batch_size,
        fixed_data=fixed_data,
        extra_metrics=extra_metrics,
        shards=int(entry["shards"]) if "shards" in entry else None,
        shard_seconds=float(entry["shard_seconds"]) if "shard_seconds" in entry else None,
    )


def grid_values(where, values) -> list:
    """A grid list as written, or ``{logspace: [low, high, count], jump_points: d}``: count
    log-spaced values rounded to 4 significant digits (readable cell ids), plus every 2d/k in
    [low, high], where OPT-wc's threshold changes (docs/design.md §5.7), kept exact."""
    if not isinstance(values, dict):
        return list(values)
    low, high, count = values["logspace"]
    if not (low < high and float(count).is_integer() and count >= 2):
        raise ConfigError(f"{where}.logspace: needs low < high and an integer count >= 2, got {values['logspace']!r}")
    points = {float(f"{value:.4g}") for value in np.geomspace(low, high, int(count))}
    if "jump_points" in values:
        jumps = mechanisms.jump_points(d=values["jump_points"], eps_low=low, eps_high=high)
        points |= {float(value) for value in jumps}
    return sorted(points)


def _budget(where, specs) -> str:
    """The one budget the experiment's mechanisms spend (docs/design.md §5.7: the user-level family
    is pure eps-DP, the rest zCDP): their ledgers and the grid are in it."""
    budgets = {spec.name: mechanisms.budget_name(spec.algorithm) for spec in specs}
    if len(set(budgets.values())) > 1:
        listed = ", ".join(f"{name}: {budget}" for name, budget in budgets.items())
        raise ConfigError(f"{where}.mechanisms: mixes privacy budgets ({listed}); an experiment sweeps one")
    return next(iter(budgets.values()))


def _batch_size(where, entry, specs, source) -> int | None:
    """Runs per call for mechanisms that take a batch of datasets (``batched``), whose data
    source draws ``runs`` datasets at once; None for the per-trial families."""
    batched = ["batched" in mechanisms.call_arguments(spec.algorithm) for spec in specs]
    if not any(batched):
        if "batch_size" in entry:
            raise ConfigError(f"{where}.batch_size: only for batched mechanisms (the user-level family)")
        return None
    if not all(batched):
        raise ConfigError(f"{where}.mechanisms: mixes batched (user-level) and per-trial mechanisms")
    if "runs" not in inspect.signature(DATA_SOURCES[source]).parameters:
        raise ConfigError(f"{where}.data.source: {source!r} cannot draw a batch of runs for batched mechanisms")
    return int(entry.get("batch_size", min(int(entry["trials"]), DEFAULT_BATCH_SIZE)))


def _mechanism(where, item, variants) -> MechanismSpec:
    if isinstance(item, str):
        if item in variants:
            return _variant_spec(item, variants[item])
        if item in mechanisms.REGISTRY:
            return MechanismSpec(item, item, ())
        raise ConfigError(
            f"{where}: unknown mechanism {item!r}; known: {sorted(set(variants) | set(mechanisms.REGISTRY))}"
        )
    (name, variant), = item.items()
    _check_variant(f"{where}.{name}", variant)
    return _variant_spec(name, variant)


def _variant_spec(name, variant) -> MechanismSpec:
    """The spec of a variant ``{algorithm: ..., option: value, ...}`` named ``name`` (a list value,
    e.g. a plug-in's interval, becomes a tuple: the spec stays hashable)."""
    options = {key: tuple(value) if isinstance(value, list) else value
               for key, value in variant.items() if key != "algorithm"}
    return MechanismSpec(name, variant["algorithm"], tuple(sorted(options.items())))


def _check_variant(where, variant):
    """A variant's algorithm (a registered name, or a plug-in: loaded and its signature checked)
    and its options: each known, and every option without a default set or supplied by the engine."""
    algorithm = variant.get("algorithm")
    if not mechanisms.is_plugin(algorithm) and algorithm not in mechanisms.REGISTRY:
        raise ConfigError(f"{where}.algorithm: unknown algorithm {algorithm!r}; known: {sorted(mechanisms.REGISTRY)}, "
                          "or a plug-in 'package.module:function' or 'path/to/file.py:function'")
    try:
        accepted = mechanisms.mechanism_options(algorithm)
    except mechanisms.PluginError as error:
        raise ConfigError(f"{where}.algorithm: {error}") from None
    options = {key: value for key, value in variant.items() if key != "algorithm"}
    unknown = mechanisms.unknown_options(algorithm, options)
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}: {algorithm} has no option {unknown[0]!r} "
                          f"(accepted: {sorted(accepted)})")
    missing = [name for name, default in accepted.items() if default is inspect.Parameter.empty
               and name not in options and name not in SAMPLE_STATISTICS and name not in RHO_FREE_STREAMS]
    if missing:
        raise ConfigError(f"{where}: {algorithm} needs option {missing[0]!r} (it has no default); set it here (the "
                          f"engine supplies only the sample's {', '.join(SAMPLE_STATISTICS)} and "
                          f"{', '.join(RHO_FREE_STREAMS)})")


def required_sample_options(algorithm: str, options=()) -> list[str]:
    """Options an algorithm requires that the engine takes from the data sample (e.g. the
    true ``std`` of plan_oracle), unless ``options`` (the variant's) set them."""
    accepted = mechanisms.mechanism_options(algorithm)
    return [name for name, default in accepted.items()
            if default is inspect.Parameter.empty and name not in options and name not in RHO_FREE_STREAMS]


def check_audits(config: dict) -> list[str]:
    """The names of the config's ``audits:`` (docs/design.md §5.8), in config order: each a
    registered audit (experiments.audit.audits.AUDITS) or an audit of a configured variant
    (:func:`audit_variant`), checked."""
    entries = config.get("audits") or {}
    for name in entries:
        audit_variant(config, name)
    return list(entries)


def audit_variant(config: dict, name: str) -> MechanismSpec | None:
    """The variant that the audit ``name`` of the config's ``audits:`` runs (None: a registered
    audit), checked: ``variant`` names one of ``variants:`` or a registered algorithm, or is an
    inline variant; ``pair`` is one of experiments.audit.audits.PAIRS; ``budget`` (the claim) is set;
    the variant is a per-trial mechanism (a pair's neighbours are swaps), spends one budget and
    needs nothing from a data sample."""
    from ..audit.audits import AUDITS, PAIRS

    where = f"audits.{name}"
    entry = (config.get("audits") or {})[name] or {}
    if "variant" not in entry:
        if name not in AUDITS:
            raise ConfigError(f"{where}: no such audit; known: {sorted(AUDITS)}, or an audit of a configured "
                              "variant (variant:, pair:, budget:)")
        for key in ("pair", "expect_violation"):
            if key in entry:
                raise ConfigError(f"{where}.{key}: only for an audit of a configured variant (variant:); {name!r} "
                                  "is a registered audit")
        return None
    if name in AUDITS:
        raise ConfigError(f"{where}: {name!r} is a registered audit; give the audit of a variant another name")
    item = entry["variant"]
    variants = config.get("variants") or {}
    if isinstance(item, dict):
        _check_variant(f"{where}.variant", item)
        spec = _variant_spec(name, item)
    elif item in variants:
        _check_variant(f"variants.{item}", variants[item])
        spec = _variant_spec(item, variants[item])
    elif item in mechanisms.REGISTRY:
        spec = MechanismSpec(item, item, ())
    else:
        raise ConfigError(f"{where}.variant: no variant {item!r} under variants: and no such algorithm "
                          f"(variants: {sorted(variants)}; algorithms: {sorted(mechanisms.REGISTRY)})")
    if "pair" not in entry:
        raise ConfigError(f"{where}.pair: an audit of a variant needs a neighbouring pair; known: {sorted(PAIRS)}")
    if entry["pair"] not in PAIRS:
        raise ConfigError(f"{where}.pair: unknown pair {entry['pair']!r}; known: {sorted(PAIRS)}")
    user_level = [argument for argument in ("users", "bound", "batched")
                  if argument in mechanisms.call_arguments(spec.algorithm)]
    if user_level:
        raise ConfigError(f"{where}.variant: {spec.name} is a user-level mechanism (it takes {', '.join(user_level)}: "
                          f"replace-a-user neighbours); the pairs {sorted(PAIRS)} swap one row of a per-trial "
                          "mechanism's data")
    try:
        budget_name = mechanisms.budget_name(spec.algorithm)
    except ValueError as error:
        raise ConfigError(f"{where}.variant: {error}") from None
    if "budget" not in entry:
        raise ConfigError(f"{where}.budget: an audit of a variant needs the budget it claims ({spec.name} spends "
                          f"{budget_name})")
    needed = required_sample_options(spec.algorithm, spec.options_dict())
    if needed:
        raise ConfigError(f"{where}.variant: {spec.name} takes {needed[0]!r} from the data sample (its true_"
                          f"{needed[0]}), which a neighbouring pair does not have; set it in the variant")
    return spec


def configured_audit(config: dict, name: str):
    """The :class:`experiments.audit.audits.Audit` that the config's audit ``name`` runs: a registered
    one, or one built for its variant (experiments.audit.audits.variant_audit)."""
    from ..audit.audits import AUDITS, variant_audit

    spec = audit_variant(config, name)
    if spec is None:
        return AUDITS[name]
    entry = config["audits"][name]
    return variant_audit(name, variant=spec.name, algorithm=spec.algorithm, options=spec.options, pair=entry["pair"],
                         budget=entry["budget"], runs=entry.get("runs"),
                         expect_violation=entry.get("expect_violation", False))


def audit_fingerprint(config: dict, name: str) -> str | None:
    """What the audit of a variant depends on beyond its runs and budget, as stable JSON (its
    variant, pair and expectation, and a plug-in's source digest); None for a registered audit,
    whose setup is the project's code."""
    spec = audit_variant(config, name)
    if spec is None:
        return None
    entry = config["audits"][name]
    return json.dumps({"variant": [spec.name, spec.algorithm, dict(spec.options)], "pair": entry["pair"],
                       "expect_violation": bool(entry.get("expect_violation", False)),
                       **({"plugin_source": digest} if (digest := mechanisms.source_digest(spec.algorithm)) else {})},
                      sort_keys=True)


def check_audit_power(config: dict) -> dict:
    """The config's ``audit_power:`` (the privacy audit's power curves, experiments/audit/power.py)
    checked beyond the schema: known mechanisms, at least the runs an audit needs, distinct
    values. Returns {"runs", "breaks", "repetitions", "mechanisms": name -> budget}, or {} without
    the section."""
    section = config.get("audit_power")
    if not section:
        return {}
    from ..audit.power import check_mechanisms, check_settings

    try:
        runs, breaks, repetitions = check_settings(runs=section.get("runs"), breaks=section.get("breaks"),
                                                   repetitions=section.get("repetitions"))
        mechanisms = check_mechanisms(section.get("mechanisms"))
    except ValueError as error:
        raise ConfigError(f"audit_power.{error}") from None
    return {"runs": runs, "breaks": breaks, "repetitions": repetitions, "mechanisms": mechanisms}


def check_illustrations(config: dict) -> dict[str, dict]:
    """The config's ``illustrations:`` (experiments/outputs/illustrations.py) checked beyond the schema
    (which fixes their keys, types and signs): bounds in order with the mean inside them, and the
    annulus inside the simplex with p1 beyond it and p2 inside its hole. Returns name ->
    parameters, in config order."""
    entries = config.get("illustrations") or {}
    for name, entry in entries.items():
        where = f"illustrations.{name}"
        if name in (config.get("figures") or {}):
            raise ConfigError(f"{where}: figures/{name}.pdf is also the output of figures.{name}; rename that figure")
        if name == "figure1":
            _check_figure1(where, entry)
        elif name == "userlevel_figure1":
            _check_userlevel_figure1(where, entry)
    return {name: dict(entry) for name, entry in entries.items()}


def _check_figure1(where, entry):
    lo, hi = entry["bounds"]
    if not lo < hi:
        raise ConfigError(f"{where}.bounds: needs lo < hi, got {entry['bounds']!r}")
    for i, value in enumerate(entry["mean"]):
        if not lo < value < hi:
            raise ConfigError(f"{where}.mean[{i}]: {value!r} is outside bounds {entry['bounds']!r}")


def _check_userlevel_figure1(where, entry):
    a, b, bound = entry["lower"], entry["upper"], entry["bound"]
    if not 0 < a < b < bound:
        raise ConfigError(f"{where}: needs 0 < lower < upper < bound (a < b < U), "
                          f"got lower={a!r}, upper={b!r}, bound={bound!r}")
    norm = sum(entry["p1"])
    if not b < norm <= bound:  # projected onto the outer face of the annulus
        raise ConfigError(f"{where}.p1: its l1 norm {norm:g} must be in (upper, bound] = ({b:g}, {bound:g}]")
    norm = sum(entry["p2"])
    if not 0 < norm < a:  # projected onto the inner face
        raise ConfigError(f"{where}.p2: its l1 norm {norm:g} must be in (0, lower) = (0, {a:g})")
# The experiments the Table 2 jobs compare (config ``table2:``, experiments/outputs/tables.py): the
# authors' protocol sweeps the std sigma with the error of the std; our corrected version sweeps
# the variance with the error of the variance. Both label a setting with the paper's sigma^2 value.
TABLE2_EXPERIMENTS = {"protocol": ("sigma", "relative_std"), "corrected": ("variance", "relative_variance")}


def exact_twins(specs) -> dict[str, str]:
    """For every mechanism with ``accounting="published"`` among ``specs`` (MechanismSpecs), the
    first one of the same algorithm and otherwise the same options under exact accounting
    (explicit or by default); mechanisms without such a twin are left out."""
    def rest(spec):
        return {key: value for key, value in spec.options if key != "accounting"}

    twins = {}
    for published in specs:
        if dict(published.options).get("accounting") != "published":
            continue
        twin = next((exact for exact in specs if exact.algorithm == published.algorithm
                     and dict(exact.options).get("accounting", "exact") == "exact" and rest(exact) == rest(published)),
                    None)
        if twin is not None:
            twins[published.name] = twin.name
    return twins


def check_table2(config: dict, experiments: dict[str, ExperimentSpec]) -> dict:
    """The config's ``table2:`` section (PLAN Table 2, Appendix D.2), checked against the
    experiments; {} without one. Returns what the table jobs need: the reference CSV, the
    protocol and corrected experiment ids (corrected None: no erratum), ``names`` (the paper's
    method -> our mechanism), ``exact`` (each named published-accounting mechanism of the
    protocol -> its exact-accounting twin there), the protocol's data source, data, trials
    and fixed_data (to describe and redraw its samples) and the corrected experiment's source
    and data (to state its universe)."""
    entry = config.get("table2")
    if not entry:
        return {}
    # a method mapped to null is left out (how a config merged over another drops one)
    names = {label: name for label, name in entry["names"].items() if name is not None}
    if not names:
        raise ConfigError("table2.names: every method is mapped to null; map at least one to a mechanism")
    ids = {"protocol": entry["protocol"], "corrected": entry.get("corrected")}
    for role, experiment in ids.items():
        if experiment is None:
            continue
        if experiment not in experiments:
            raise ConfigError(f"table2.{role}: no experiment {experiment!r} (experiments: {sorted(experiments)})")
        grid, metric = TABLE2_EXPERIMENTS[role]
        spec = experiments[experiment]
        if spec.setting_names != [grid] or spec.budget != "rho" or spec.metric != metric:
            raise ConfigError(f"table2.{role}: experiment {experiment!r} must sweep {grid} and rho with metric "
                              f"{metric}, got grid {spec.grid_names} and metric {spec.metric}")
        mechanism_names = {m.name for m in spec.mechanisms}
        for label, name in names.items():
            if name not in mechanism_names:
                raise ConfigError(f"table2.names.{label}: {name!r} is not a mechanism of experiment {experiment!r} "
                                  f"(mechanisms: {sorted(mechanism_names)})")
    protocol = experiments[ids["protocol"]]
    corrected = experiments.get(ids["corrected"])
    named = set(names.values())
    return {
        "reference": entry["reference"],
        **ids,
        "names": names,
        "exact": {name: twin for name, twin in exact_twins(protocol.mechanisms).items() if name in named},
        "source": protocol.source,
        "data": dict(protocol.data),
        "trials": protocol.trials,
        "fixed_data": protocol.fixed_data,
        "corrected_source": corrected.source if corrected else None,
        "corrected_data": dict(corrected.data) if corrected else None,
    }
