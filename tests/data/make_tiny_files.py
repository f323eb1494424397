"""Write the tiny raw files the real-dataset tests serve (run once; the files are committed).

    python tests/data/make_tiny_files.py

kosarak_tiny.dat.gz: 40 sessions in FIMI's kosarak.dat format (space-separated item ids, one
session per line), gzipped with mtime 0 (the same bytes every run). Ids are scattered in
1..5000 (not contiguous); some lines have a repeated id; lines 1-4 sit at the min_items
boundary: 20 distinct ids, 19 ids, 20 ids of which one is a repeat (19 distinct), 19 ids with
a repeat. The lengths of the others straddle 20 and 5.

kosarak_tiny.hdf5: the sessions of kosarak_tiny.dat.gz with at least 5 ids (the smoke config's
min_items) in ann-benchmarks' kosarak-jaccard.hdf5 layout, as ann-benchmarks wrote it: each
session sorted (duplicates kept), the sessions shuffled and split into train (26) and test (6),
stored as the flat id arrays train and test with the session lengths size_train and size_test
(int64), and the attributes ann-benchmarks sets. Datasets without creation times, so the file
is the same bytes every run.

BMS-POS_tiny.csv: 30 transactions in BMS-POS.csv's format, "id,id,...,id," (each line ends
with a comma: the authors' line.split(",")[:-1] drops the empty last field), ids scattered in
0..200.

mnist_tiny/: 12 train and 6 test images of 28 x 28 uint8 pixels with digit labels, as MNIST's four
gzipped IDX files under their published names (train-images-idx3-ubyte.gz, ...: the big-endian
header 0x00000803 n 28 28 for images, 0x00000801 n for labels, then the bytes), gzipped with mtime
0. mnist_tiny.npz: the same arrays in Keras' mnist.npz layout (x_train, y_train, x_test, y_test;
np.savez_compressed, whose zip entries carry a fixed date). Each image is a rectangle of ink of
random values 1..255 inside the central 20 x 20 pixels, zeros elsewhere (made up, not MNIST).

Their statistics are in README.md beside this file; the tests recompute them with plain Python.
"""
import gzip
import random
import struct
from pathlib import Path

import h5py
import numpy as np

HERE = Path(__file__).resolve().parent
ANN_BENCHMARKS_MIN_ITEMS = 5  # the smoke config's min_items (ann-benchmarks' own is 20)
ANN_BENCHMARKS_TEST_SESSIONS = 6
MNIST_TRAIN_LABELS = [0, 1, 2, 0, 1, 2, 0, 1, 3, 4, 2, 7]
MNIST_TEST_LABELS = [1, 0, 2, 9, 1, 0]
MNIST_IDX_FILES = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
                   "t10k-labels-idx1-ubyte.gz")


def kosarak_lines(rng: random.Random) -> list[list[int]]:
    pool = rng.sample(range(1, 5001), 120)  # the ids in use: scattered, not contiguous

    def session(length: int, *, repeats: int = 0) -> list[int]:
        ids = rng.sample(pool, length - repeats)
        for _ in range(repeats):  # a repeated click: an id already in the line
            ids.insert(rng.randrange(len(ids) + 1), rng.choice(ids))
        return ids

    lines = [session(20), session(19), session(20, repeats=1), session(19, repeats=1)]
    lengths = [1, 3, 5, 4, 6, 2, 25, 31, 8, 12, 21, 5, 7, 44, 19, 20, 3, 9, 18, 22, 6, 4, 5, 27, 2, 11, 60, 16,
               5, 1, 23, 14, 8, 5, 20, 10]
    for number, length in enumerate(lengths):
        lines.append(session(length, repeats=1 if number % 7 == 3 and length > 2 else 0))
    return lines


def pos_lines(rng: random.Random) -> list[list[int]]:
    pool = rng.sample(range(0, 201), 45)
    lengths = [1, 4, 7, 2, 9, 3, 6, 12, 1, 5, 8, 3, 2, 15, 6, 4, 7, 3, 1, 10, 5, 6, 2, 9, 4, 3, 8, 5, 2, 6]
    return [rng.sample(pool, length) for length in lengths]


def write_ann_benchmarks(path: Path, sessions: list[list[int]], rng: random.Random) -> None:
    """The sessions with at least ANN_BENCHMARKS_MIN_ITEMS ids, as ann-benchmarks' kosarak-jaccard.hdf5."""
    kept = [sorted(ids) for ids in sessions if len(ids) >= ANN_BENCHMARKS_MIN_ITEMS]
    rng.shuffle(kept)
    test, train = kept[:ANN_BENCHMARKS_TEST_SESSIONS], kept[ANN_BENCHMARKS_TEST_SESSIONS:]
    with h5py.File(path, "w", libver="earliest") as f:
        f.attrs["type"] = "sparse"
        f.attrs["distance"] = "jaccard"
        f.attrs["dimension"] = max(max(ids) for ids in kept) + 1
        f.attrs["point_type"] = "bit"
        for name, part in (("train", train), ("test", test)):
            f.create_dataset(name, data=np.array([i for ids in part for i in ids], dtype=np.int64),
                             track_times=False)
            f.create_dataset(f"size_{name}", data=np.array([len(ids) for ids in part], dtype=np.int64),
                             track_times=False)


def mnist_images(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` 28 x 28 uint8 images: a rectangle of ink (values 1..255) in the central 20 x 20."""
    images = np.zeros((count, 28, 28), dtype=np.uint8)
    for image in images:
        top, left = rng.integers(4, 14, size=2)
        height, width = rng.integers(3, 11, size=2)
        image[top:top + height, left:left + width] = rng.integers(1, 256, size=(height, width))
    return images


def idx_bytes(array: np.ndarray) -> bytes:
    """An unsigned-byte IDX file: 0x00 0x00 0x08 <dimensions>, one big-endian size per dimension, the bytes."""
    header = struct.pack(">BBBB", 0, 0, 0x08, array.ndim) + struct.pack(f">{array.ndim}I", *array.shape)
    return header + array.astype(np.uint8).tobytes()


def write_mnist(directory: Path, npz: Path) -> None:
    rng = np.random.default_rng(20240809)
    arrays = {"x_train": mnist_images(rng, len(MNIST_TRAIN_LABELS)), "y_train": np.array(MNIST_TRAIN_LABELS, np.uint8),
              "x_test": mnist_images(rng, len(MNIST_TEST_LABELS)), "y_test": np.array(MNIST_TEST_LABELS, np.uint8)}
    directory.mkdir(exist_ok=True)
    for name, key in zip(MNIST_IDX_FILES, ("x_train", "y_train", "x_test", "y_test")):
        (directory / name).write_bytes(gzip.compress(idx_bytes(arrays[key]), mtime=0))
    np.savez_compressed(npz, **arrays)


def main() -> None:
    rng = random.Random(20240807)
    sessions = kosarak_lines(rng)
    kosarak = "".join(" ".join(map(str, ids)) + "\n" for ids in sessions)
    (HERE / "kosarak_tiny.dat.gz").write_bytes(gzip.compress(kosarak.encode("ascii"), mtime=0))
    write_ann_benchmarks(HERE / "kosarak_tiny.hdf5", sessions, random.Random(20240808))
    pos = "".join("".join(f"{i}," for i in ids) + "\n" for ids in pos_lines(rng))
    (HERE / "BMS-POS_tiny.csv").write_bytes(pos.encode("ascii"))
    write_mnist(HERE / "mnist_tiny", HERE / "mnist_tiny.npz")


if __name__ == "__main__":
    main()
