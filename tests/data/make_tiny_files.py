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

Their statistics are in README.md beside this file; the tests recompute them with plain Python.
"""
import gzip
import random
from pathlib import Path

import h5py
import numpy as np

HERE = Path(__file__).resolve().parent
ANN_BENCHMARKS_MIN_ITEMS = 5  # the smoke config's min_items (ann-benchmarks' own is 20)
ANN_BENCHMARKS_TEST_SESSIONS = 6


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


def main() -> None:
    rng = random.Random(20240807)
    sessions = kosarak_lines(rng)
    kosarak = "".join(" ".join(map(str, ids)) + "\n" for ids in sessions)
    (HERE / "kosarak_tiny.dat.gz").write_bytes(gzip.compress(kosarak.encode("ascii"), mtime=0))
    write_ann_benchmarks(HERE / "kosarak_tiny.hdf5", sessions, random.Random(20240808))
    pos = "".join("".join(f"{i}," for i in ids) + "\n" for ids in pos_lines(rng))
    (HERE / "BMS-POS_tiny.csv").write_bytes(pos.encode("ascii"))


if __name__ == "__main__":
    main()
