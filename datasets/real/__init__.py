"""The real datasets (docs/design.md §7): Kosarak and BMS-POS of the PLAN binary experiments, and
MNIST of the IOME paper's empirical mean estimation.

Four steps, each usable on its own (the workflow runs them as rules):

- :func:`fetch` (:mod:`.download`) obtains one raw file: a local path, a cached download, or a
  download with timeouts, retries, streaming to a temporary file and an atomic rename; the
  file's sha256 is recorded beside it. Anything that prevents it raises
  :class:`DatasetUnavailable`, whose message says how to supply the file by hand.
- :func:`obtain` (:mod:`.download`) tries a dataset's list of sources in order (:class:`Source`:
  a URL or a local path, and the file's format) and returns the first file whose parse passes
  the expected statistics; when none does, one :class:`DatasetUnavailable` names every source
  and why it failed.
- :func:`parse` (:mod:`.parsing`) reads a raw file of any of the dataset's formats into a binary
  CSR matrix and its statistics, the way the paper's authors read it (docs/design.md §7), its rows in
  a canonical order (so every source of the same sessions gives the same bytes); MNIST, from its
  four IDX files or Keras' npz, into labelled images (:mod:`.image_formats`).
- :func:`process` (:mod:`.cache`) parses, checks the statistics against the expected ones and
  caches the data (``<name>.npz``) with its statistics (``<name>.json``); :func:`load` reads
  them back.

The datasets, their formats and sources, the paths and the errors are in :mod:`.catalog`;
:mod:`.files` holds the file helpers the steps share. Paths are relative to the working
directory (the workflow runs from the repository root).
"""

# What callers import from datasets.real (docs/workflow.md#real-datasets-kosarak-and-pos, the workflow, the tests).
from .cache import load, process
from .catalog import (
    IMAGE_STATISTICS,
    MNIST_IDX_FILES,
    RAW_DIR,
    REAL_DATASETS,
    STATISTICS,
    DatasetError,
    DatasetUnavailable,
    RawFormat,
    RealDataset,
    Source,
    sources_of,
)
from .download import fetch, obtain
from .image_formats import parse_keras_mnist_npz, parse_mnist_idx
from .parsing import parse, parse_ann_benchmarks_hdf5, parse_kosarak, parse_pos

__all__ = [
    "IMAGE_STATISTICS",
    "MNIST_IDX_FILES",
    "RAW_DIR",
    "REAL_DATASETS",
    "STATISTICS",
    "DatasetError",
    "DatasetUnavailable",
    "RawFormat",
    "RealDataset",
    "Source",
    "fetch",
    "load",
    "obtain",
    "parse",
    "parse_ann_benchmarks_hdf5",
    "parse_keras_mnist_npz",
    "parse_kosarak",
    "parse_mnist_idx",
    "parse_pos",
    "process",
    "sources_of",
]
