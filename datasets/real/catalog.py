"""What the workflow knows about each real dataset (docs/design.md §7): its kind, its formats, its
default sources, where raw and processed files go, the statistics its parse records, and the
errors every step raises."""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

RAW_DIR = Path("datasets/raw")
PROCESSED_DIR = Path("datasets/processed")

STATISTICS = ("n", "d", "tokens", "occurrences")
EXPECT_KEYS = STATISTICS + ("git_blob",)
DEFAULT_MIN_ITEMS = 20  # Kosarak: ann-benchmarks' kosarak-jaccard keeps lines with >= 20 ids

# The kinds of real dataset: "binary" ones (Kosarak, POS) are parsed to a sparse 0/1 matrix of item
# sets, "images" ones (MNIST) to labelled uint8 pixels (datasets.images.LabelledImages).
KINDS = ("binary", "images")
# What an image dataset's parse records and its `expect` may check: rows, pixels per image, rows
# of the train split, images per digit (all, and in the train split), and the mean pixel of the
# train split on the 0..1 scale (pixels / 255), checked to the precision the expected value is
# written with (docs/design.md §7).
IMAGE_STATISTICS = ("n", "d", "n_train", "label_counts", "train_label_counts", "train_pixel_mean")


@dataclass(frozen=True)
class RawFormat:
    """A file format a dataset's raw file can come in: one file, or several files of fixed
    names (``members``, MNIST's four IDX files) that a source names together, a URL source by
    the base URL the names are appended to, a path source by the directory holding them."""

    name: str  # the config's `format`
    filename: str  # a download in this format is cached as raw_dir/<filename> (with members: that directory)
    container: str  # what each file must be before parsing: "gzip", "hdf5", "npz" (a zip archive) or "text"
    members: tuple[str, ...] = ()  # the files of a format of several, in their canonical order

    def files(self, location: str | os.PathLike) -> list[Path]:
        """The raw files at ``location`` (a file; a directory for a format of several)."""
        location = Path(location)
        return [location / member for member in self.members] if self.members else [location]

    def member_url(self, base: str, member: str) -> str:
        """The URL of ``member`` under a source's base URL (a "/" is added where it lacks one)."""
        return base + member if base.endswith("/") else f"{base}/{member}"


@dataclass(frozen=True)
class Source:
    """One place to obtain a dataset's raw file from: a URL to download, or a local path
    (exactly one of the two), with the file's format."""

    format: str
    url: str | None = None
    path: str | None = None

    @property
    def location(self) -> str:
        return self.url if self.url is not None else self.path

    def as_dict(self) -> dict:
        """As the config writes it: {url: ..., format: ...} or {path: ..., format: ...}."""
        if self.url is not None:
            return {"url": self.url, "format": self.format}
        return {"path": self.path, "format": self.format}


@dataclass(frozen=True)
class RealDataset:
    """A dataset the workflow knows how to fetch and parse."""

    name: str
    description: str  # one line, for messages and the report
    formats: tuple[RawFormat, ...]  # the formats it can be read from; the first is its native one
    sources: tuple[Source, ...]  # the default sources, tried in order
    kind: str = "binary"  # one of KINDS

    @property
    def statistics(self) -> tuple[str, ...]:
        """What its parse records (and a fetch status reports) besides the file's hashes."""
        return IMAGE_STATISTICS if self.kind == "images" else STATISTICS

    @property
    def expect_keys(self) -> tuple[str, ...]:
        """The statistics its config's ``expect`` may check (git_blob: POS only, a file's hash)."""
        return IMAGE_STATISTICS if self.kind == "images" else EXPECT_KEYS

    def raw_format(self, name: str | None = None) -> RawFormat:
        """The format called ``name`` (None: the native one); an unknown name raises."""
        if name is None:
            return self.formats[0]
        for raw_format in self.formats:
            if raw_format.name == name:
                return raw_format
        raise DatasetError(f"unknown format {name!r} for dataset {self.name}; known: "
                           f"{', '.join(f.name for f in self.formats)}")


FIMI_KOSARAK_URL = "http://fimi.uantwerpen.be/data/kosarak.dat.gz"
# The file the PLAN authors' script loads: ann-benchmarks' Jaccard benchmark built from the FIMI file.
ANN_BENCHMARKS_KOSARAK_URL = "http://ann-benchmarks.com/kosarak-jaccard.hdf5"
HARM_POS_URL = "https://raw.githubusercontent.com/cpearce/HARM/master/datasets/BMS-POS.csv"
# MNIST (docs/design.md §7): the four gzipped IDX files as LeCun, Cortes and Burges published them,
# under these names on two mirrors (torchvision's datasets/mnist.py lists the first, TensorFlow
# Datasets' mnist.py the second, "CVDF mirror of http://yann.lecun.com/exdb/mnist/"), and Keras'
# NumPy archive of the same arrays (keras/src/datasets/mnist.py).
MNIST_IDX_FILES = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
                   "t10k-labels-idx1-ubyte.gz")
OSSCI_MNIST_URL = "https://ossci-datasets.s3.amazonaws.com/mnist/"
CVDF_MNIST_URL = "https://storage.googleapis.com/cvdf-datasets/mnist/"
KERAS_MNIST_URL = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz"

REAL_DATASETS: dict[str, RealDataset] = {
    "kosarak": RealDataset(
        name="kosarak",
        description="Kosarak: click-stream sessions of a Hungarian news portal (FIMI repository)",
        formats=(
            # FIMI's kosarak.dat.gz: gzipped text, one session of item ids per line (parse_kosarak)
            RawFormat(name="fimi", filename="kosarak.dat.gz", container="gzip"),
            # ann-benchmarks' kosarak-jaccard.hdf5: the sessions as flat arrays (parse_ann_benchmarks_hdf5)
            RawFormat(name="ann_benchmarks_hdf5", filename="kosarak-jaccard.hdf5", container="hdf5"),
        ),
        sources=(Source(url=FIMI_KOSARAK_URL, format="fimi"),
                 Source(url=ANN_BENCHMARKS_KOSARAK_URL, format="ann_benchmarks_hdf5")),
    ),
    "pos": RealDataset(
        name="pos",
        description="BMS-POS: point-of-sale transactions of an electronics retailer (HARM repository)",
        # HARM's BMS-POS.csv: one transaction per line, each id followed by a comma (parse_pos)
        formats=(RawFormat(name="bms_pos_csv", filename="BMS-POS.csv", container="text"),),
        sources=(Source(url=HARM_POS_URL, format="bms_pos_csv"),),
    ),
    "mnist": RealDataset(
        name="mnist",
        description="MNIST: 70,000 handwritten digits of 28 x 28 pixels (LeCun, Cortes, Burges)",
        kind="images",
        formats=(
            # the published IDX files, gzipped: images and labels of the train and test splits (parse_mnist_idx)
            RawFormat(name="idx", filename="mnist-idx", container="gzip", members=MNIST_IDX_FILES),
            # Keras' mnist.npz: x_train, y_train, x_test, y_test (parse_keras_mnist_npz)
            RawFormat(name="keras_npz", filename="mnist.npz", container="npz"),
        ),
        sources=(Source(url=OSSCI_MNIST_URL, format="idx"), Source(url=CVDF_MNIST_URL, format="idx"),
                 Source(url=KERAS_MNIST_URL, format="keras_npz")),
    ),
}


class DatasetError(ValueError):
    """Any problem with a real dataset; the message alone says what and what to do."""


class DatasetUnavailable(DatasetError):
    """The raw file could not be obtained (offline, dead URL, HTTP error, corrupt download,
    or, from :func:`obtain`, no source gave data with the expected statistics).

    ``dataset``: its name; ``url``: the URL it would be (or was) downloaded from (None when
    several sources were tried); ``source``: what failed (that URL, a local path, or "any of
    its N sources"); ``reason``: short; ``how_to_supply``: what the user can do instead;
    ``tried``: from :func:`obtain`, one dict per source tried (its url or path, format, and
    the reason it failed).
    """

    def __init__(self, *, dataset: str, url: str | None, reason: str, how_to_supply: str, source: str | None = None,
                 tried: tuple = ()):
        self.dataset = dataset
        self.url = url
        self.source = url if source is None else source
        self.reason = reason
        self.how_to_supply = how_to_supply
        self.tried = tuple(tried)
        super().__init__(
            f"could not obtain dataset {dataset!r} from {self.source}: {reason}. To supply it: {how_to_supply}."
        )

    def __reduce__(self):  # keyword-only __init__: pickling (multiprocessing) needs this
        return (_rebuild_unavailable, (self.dataset, self.url, self.reason, self.how_to_supply, self.source,
                                       self.tried))


def _rebuild_unavailable(dataset, url, reason, how_to_supply, source, tried):
    return DatasetUnavailable(dataset=dataset, url=url, reason=reason, how_to_supply=how_to_supply, source=source,
                              tried=tried)


def dataset_named(name: str) -> RealDataset:
    try:
        return REAL_DATASETS[name]
    except (KeyError, TypeError):
        raise DatasetError(f"unknown dataset {name!r}; known: {', '.join(REAL_DATASETS)}") from None


def sources_of(name: str, specs) -> tuple[Source, ...]:
    """Dataset ``name``'s sources from :class:`Source` objects or mappings as the config writes
    them ({url: ..., format: ...} or {path: ..., format: ...}; format defaults to the dataset's
    native one), checked: exactly one of url and path, a format the dataset has, at least one
    source. A bad entry raises one :class:`DatasetError` naming it."""
    dataset = dataset_named(name)
    if isinstance(specs, (str, bytes, Mapping)) or not hasattr(specs, "__iter__"):
        raise DatasetError(f"sources of {dataset.name} must be a list of sources, got {specs!r}")
    sources = []
    for number, spec in enumerate(specs):
        where = f"datasets.{dataset.name}.sources[{number}]"
        if isinstance(spec, Source):
            spec = spec.as_dict()
        if not isinstance(spec, Mapping):
            raise DatasetError(f"{where}: a source is {{url: ...}} or {{path: ...}} with a format, got {spec!r}")
        unknown = sorted(str(key) for key in spec if key not in ("url", "path", "format"))
        if unknown:
            raise DatasetError(f"{where}: unknown key(s) {', '.join(unknown)}; a source has url or path, and format")
        given = [key for key in ("url", "path") if spec.get(key) is not None]
        if len(given) != 1:
            raise DatasetError(f"{where}: give exactly one of url and path, got {spec!r}")
        location = spec[given[0]]
        if not isinstance(location, (str, os.PathLike)) or not str(location):
            raise DatasetError(f"{where}.{given[0]}: must be a non-empty string, got {location!r}")
        try:
            raw_format = dataset.raw_format(spec.get("format"))
        except DatasetError as error:
            raise DatasetError(f"{where}.format: {error}") from None
        sources.append(Source(format=raw_format.name, **{given[0]: str(location)}))
    if not sources:
        raise DatasetError(f"datasets.{dataset.name}.sources: the list is empty; give at least one source")
    return tuple(sources)
