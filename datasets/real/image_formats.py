"""Reading MNIST's raw files (docs/design.md §7): the four gzipped IDX files as published
(:func:`parse_mnist_idx`) and Keras' NumPy archive of them (:func:`parse_keras_mnist_npz`). Both
give the same :class:`~datasets.images.LabelledImages`, byte for byte: the train images, then the
test images, each in its file's order, as rows of uint8 pixels, with their labels and split; and
the same statistics (:func:`image_statistics`) but for the file's hashes."""
from __future__ import annotations

import gzip
import hashlib
import math
import os
import zipfile
import zlib
from pathlib import Path

import numpy as np

from datasets.images import DIGITS, SPLITS, LabelledImages

from .catalog import MNIST_IDX_FILES, DatasetError

# IDX (LeCun, Cortes, Burges, "THE MNIST DATABASE of handwritten digits"): a big-endian header, the
# magic number 0x00 0x00, the element type (0x08: unsigned byte) and the number of dimensions,
# then one 32-bit size per dimension, then the elements in row-major order.
_IDX_UNSIGNED_BYTE = 0x08
_IMAGE_DIMENSIONS, _LABEL_DIMENSIONS = 3, 1
_KERAS_ARRAYS = ("x_train", "y_train", "x_test", "y_test")


def parse_mnist_idx(raw_dir: str | os.PathLike) -> tuple[LabelledImages, dict]:
    """MNIST from the directory ``raw_dir`` holding the four gzipped IDX files under their
    published names (:data:`~datasets.real.catalog.MNIST_IDX_FILES`): the images of
    ``train-images-idx3-ubyte.gz`` then ``t10k-images-idx3-ubyte.gz`` (magic number 0x00000803:
    unsigned bytes, three dimensions n x rows x columns) as rows of rows * columns pixels, and the
    labels of the two label files (0x00000801: unsigned bytes, one dimension), as the IOME
    authors' code reads them (their utils.py).

    A missing or unreadable file, a corrupt gzip, a wrong magic number, a body shorter or longer
    than its header announces, image and label counts that differ, splits of different image
    sizes or a label that is not a digit 0..9 raises one :class:`DatasetError` naming the file.

    Returns the images and the statistics of :func:`image_statistics` with ``sha256`` (of the
    manifest ``"<sha256 of the file>  <name>\\n"`` of the four files in their published order),
    ``files`` (each file's sha256) and ``source_file`` (the directory's name).
    """
    raw_dir = Path(raw_dir)
    arrays, digests = {}, {}
    for name in MNIST_IDX_FILES:
        path = raw_dir / name
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise DatasetError(f"{path} is missing: a directory of MNIST IDX files holds"
                               f" {', '.join(MNIST_IDX_FILES)}") from None
        except OSError as exc:
            raise DatasetError(f"cannot read {path} ({exc.strerror or exc})") from None
        digests[name] = hashlib.sha256(raw).hexdigest()
        try:
            content = gzip.decompress(raw)
        except (gzip.BadGzipFile, EOFError, zlib.error):
            raise DatasetError(f"{path} is a corrupt gzip file; delete it and fetch it again") from None
        dimensions = _LABEL_DIMENSIONS if "-labels-" in name else _IMAGE_DIMENSIONS
        arrays[name] = read_idx(content, dimensions=dimensions, where=str(path))
    images = _assemble(*(arrays[name] for name in MNIST_IDX_FILES), where=str(raw_dir),
                       names=tuple(str(raw_dir / name) for name in MNIST_IDX_FILES))
    manifest = "".join(f"{digests[name]}  {name}\n" for name in MNIST_IDX_FILES)
    statistics = image_statistics(images)
    statistics.update(sha256=hashlib.sha256(manifest.encode("ascii")).hexdigest(), files=digests,
                      source_file=raw_dir.name)
    return images, statistics


def parse_keras_mnist_npz(raw_path: str | os.PathLike) -> tuple[LabelledImages, dict]:
    """MNIST from Keras' ``mnist.npz`` (keras.datasets.mnist.load_data): the arrays ``x_train``
    (n x rows x columns uint8), ``y_train``, ``x_test`` and ``y_test`` (labels 0..9, any integer
    type), read without unpickling; the same rows as :func:`parse_mnist_idx` (train, then test).

    A file that is not a NumPy archive, lacks one of the four arrays, holds images that are not
    three-dimensional uint8 arrays, labels that are not one-dimensional integers 0..9, or counts
    and image sizes that do not match raises one :class:`DatasetError` naming the problem.

    Returns the images and the statistics of :func:`image_statistics` with the file's ``sha256``
    and ``source_file``.
    """
    raw_path = Path(raw_path)
    try:
        digest = hashlib.sha256(raw_path.read_bytes()).hexdigest()
        with np.load(raw_path, allow_pickle=False) as archive:
            missing = [name for name in _KERAS_ARRAYS if name not in archive.files]
            if missing:
                raise DatasetError(f"{raw_path} is not Keras' mnist.npz: it lacks the array(s) {', '.join(missing)}"
                                   f" (it needs {', '.join(_KERAS_ARRAYS)})")
            arrays = {name: archive[name] for name in _KERAS_ARRAYS}
    except DatasetError:
        raise
    except FileNotFoundError:
        raise DatasetError(f"{raw_path} is missing") from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        # numpy and zipfile raise these for a file that is not an archive, is cut short, or holds
        # an object array (allow_pickle=False)
        raise DatasetError(f"{raw_path} is not a readable NumPy archive ({type(exc).__name__}: {exc});"
                           " delete it and fetch it again") from None
    for name in ("x_train", "x_test"):
        if arrays[name].ndim != _IMAGE_DIMENSIONS or arrays[name].dtype != np.uint8:
            raise DatasetError(f"{raw_path}: {name} must be a three-dimensional uint8 array (images x rows x"
                               f" columns), got shape {arrays[name].shape} of {arrays[name].dtype}")
    for name in ("y_train", "y_test"):
        if arrays[name].ndim != _LABEL_DIMENSIONS or arrays[name].dtype.kind not in "iu":
            raise DatasetError(f"{raw_path}: {name} must be a one-dimensional integer array of labels, got shape"
                               f" {arrays[name].shape} of {arrays[name].dtype}")
    images = _assemble(*(arrays[name] for name in _KERAS_ARRAYS), where=str(raw_path),
                       names=tuple(f"{raw_path}: {name}" for name in _KERAS_ARRAYS))
    statistics = image_statistics(images)
    statistics.update(sha256=digest, source_file=raw_path.name)
    return images, statistics


def read_idx(content: bytes, *, dimensions: int, where: str) -> np.ndarray:
    """The unsigned-byte IDX array of ``dimensions`` dimensions in ``content`` (a decompressed
    file), as a read-only view of it; a header other than the one expected or a body of another
    size than the header's raises one :class:`DatasetError` naming ``where``."""
    header = 4 + 4 * dimensions
    if len(content) < header:
        raise DatasetError(f"{where}: {len(content)} bytes are too few for an IDX header of {dimensions}"
                           f" dimension(s) ({header} bytes)")
    magic = int.from_bytes(content[:4], "big")
    expected = _IDX_UNSIGNED_BYTE << 8 | dimensions
    if magic != expected:
        what = "labels" if dimensions == _LABEL_DIMENSIONS else "images"
        raise DatasetError(f"{where}: wrong magic number {magic:#010x} in the IDX header; MNIST {what} have"
                           f" {expected:#010x} (unsigned bytes, {dimensions} dimension(s))")
    shape = tuple(int.from_bytes(content[4 + 4 * i:8 + 4 * i], "big") for i in range(dimensions))
    size, body = math.prod(shape), len(content) - header
    if body != size:
        raise DatasetError(f"{where}: the IDX header announces {' x '.join(map(str, shape))} = {size} bytes of data,"
                           f" the file holds {body}")
    return np.frombuffer(content, dtype=np.uint8, offset=header).reshape(shape)


def _assemble(train_images, train_labels, test_images, test_labels, *, where: str, names: tuple) -> LabelledImages:
    """The train rows, then the test rows, checked: each split's images and labels of the same
    count, both splits' images of the same size, every label a digit."""
    for images, labels, image_name, label_name in ((train_images, train_labels, names[0], names[1]),
                                                    (test_images, test_labels, names[2], names[3])):
        if images.shape[0] != labels.shape[0]:
            raise DatasetError(f"{image_name} holds {images.shape[0]} images but {label_name} {labels.shape[0]}"
                               " labels")
        if labels.size and (labels.min() < 0 or labels.max() >= DIGITS):
            at = int(np.flatnonzero((labels < 0) | (labels >= DIGITS))[0])
            raise DatasetError(f"{label_name}: label {int(labels[at])} of image {at} is not a digit 0..9")
    if train_images.shape[1:] != test_images.shape[1:]:
        raise DatasetError(f"{where}: the train images are {' x '.join(map(str, train_images.shape[1:]))} pixels,"
                           f" the test images {' x '.join(map(str, test_images.shape[1:]))}")
    pixels = math.prod(train_images.shape[1:])
    if not train_images.shape[0] or not pixels:
        raise DatasetError(f"{where}: the train split holds no images (shape {train_images.shape})")
    images = np.concatenate([train_images.reshape(-1, pixels), test_images.reshape(-1, pixels)])
    labels = np.concatenate([train_labels, test_labels]).astype(np.uint8)
    split = np.repeat(np.arange(len(SPLITS), dtype=np.uint8), [train_images.shape[0], test_images.shape[0]])
    return LabelledImages(images=images, labels=labels, split=split)


def image_statistics(images: LabelledImages) -> dict:
    """What :data:`~datasets.real.catalog.IMAGE_STATISTICS` names: ``n`` images, ``d`` pixels
    each, ``n_train`` of the train split, ``label_counts`` and ``train_label_counts`` (images per
    digit 0..9, all and in the train split), and ``train_pixel_mean``, the mean pixel of the train
    split divided by 255 (from the exact integer sum)."""
    train = images.split == SPLITS.index("train")
    n_train = int(np.count_nonzero(train))
    n, d = images.images.shape
    total = int(images.images[train].sum(dtype=np.int64))
    return {
        "n": int(n),
        "d": int(d),
        "n_train": n_train,
        "label_counts": np.bincount(images.labels, minlength=DIGITS).tolist(),
        "train_label_counts": np.bincount(images.labels[train], minlength=DIGITS).tolist(),
        "train_pixel_mean": total / (n_train * d) / 255,
    }
