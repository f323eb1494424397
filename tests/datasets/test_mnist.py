"""MNIST as a real dataset (datasets/real/, docs/design.md §7): its two formats, the four gzipped
IDX files and Keras' npz, parsed to the same labelled images; fetching the four files as one
source (a base URL, a directory) through a real HTTP server on 127.0.0.1; the checks of
`expect`; the dense processed cache. The tiny files in tests/data/ (README.md there) are in the
real formats; they are read here with struct and gzip as well as by the parsers."""

import gzip
import hashlib
import json
import logging
import shutil
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

from datasets import LabelledImages
from datasets.real import (
    IMAGE_STATISTICS,
    MNIST_IDX_FILES,
    REAL_DATASETS,
    DatasetError,
    DatasetUnavailable,
    fetch,
    load,
    obtain,
    parse,
    process,
    sources_of,
)
from datasets.real.cache import written_tolerance

DATA = Path(__file__).resolve().parents[1] / "data"
TINY_IDX, TINY_NPZ = DATA / "mnist_tiny", DATA / "mnist_tiny.npz"
# tests/data/README.md
TINY_STATS = {"n": 18, "d": 784, "n_train": 12, "label_counts": [5, 5, 4, 1, 1, 0, 0, 1, 0, 1],
              "train_label_counts": [3, 3, 3, 1, 1, 0, 0, 1, 0, 0], "train_pixel_mean": 0.033775176737361606}
TINY_TRAIN_LABELS = [0, 1, 2, 0, 1, 2, 0, 1, 3, 4, 2, 7]
TINY_TEST_LABELS = [1, 0, 2, 9, 1, 0]
TINY_IDX_SHA256 = "15c33dcca8ad287749c5d1b0074585ee45e04a0ca726804f970b7c6a9dc06b39"
FAST = {"backoff": 0.01, "timeout": (2.0, 2.0)}
HTML_PAGE = b"<!DOCTYPE html>\n<html><body>Not here</body></html>\n"
TRAIN_IMAGES, TRAIN_LABELS, TEST_IMAGES, TEST_LABELS = MNIST_IDX_FILES


def plain_idx(path: Path) -> tuple[tuple, bytes]:
    """An IDX file read with struct: its shape and its data bytes."""
    content = gzip.decompress(path.read_bytes())
    zero, kind, dimensions = struct.unpack(">HBB", content[:4])
    assert (zero, kind) == (0, 0x08)
    shape = struct.unpack(f">{dimensions}I", content[4:4 + 4 * dimensions])
    return shape, content[4 + 4 * dimensions:]


def idx_file(path: Path, array: np.ndarray, *, magic: int | None = None, extra: bytes = b"") -> Path:
    """A gzipped IDX file of ``array`` (uint8), its magic number or trailing bytes changed if given."""
    magic = 0x0800 | array.ndim if magic is None else magic
    header = struct.pack(">I", magic) + struct.pack(f">{array.ndim}I", *array.shape)
    path.write_bytes(gzip.compress(header + array.astype(np.uint8).tobytes() + extra, mtime=0))
    return path


def tiny_arrays() -> dict[str, np.ndarray]:
    with np.load(TINY_NPZ) as archive:
        return {name: archive[name] for name in archive.files}


def copy_idx(directory: Path) -> Path:
    shutil.copytree(TINY_IDX, directory)
    return directory


def same_images(a: LabelledImages, b: LabelledImages) -> bool:
    return all(getattr(a, name).dtype == getattr(b, name).dtype and getattr(a, name).shape == getattr(b, name).shape
               and getattr(a, name).tobytes() == getattr(b, name).tobytes() for name in ("images", "labels", "split"))


def entries(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


# --------------------------------------------------------------------------------------------
# parsing both formats


def test_the_tiny_idx_files_and_the_tiny_npz_parse_to_the_same_images_byte_for_byte():
    from_idx, idx_stats = parse("mnist", TINY_IDX, format="idx")
    from_npz, npz_stats = parse("mnist", TINY_NPZ, format="keras_npz")
    assert same_images(from_idx, from_npz)
    assert from_idx.images.shape == (18, 784) and from_idx.images.dtype == np.uint8
    assert {key: idx_stats[key] for key in IMAGE_STATISTICS} == {key: npz_stats[key] for key in IMAGE_STATISTICS} \
        == TINY_STATS
    assert (idx_stats["format"], npz_stats["format"]) == ("idx", "keras_npz")
    assert npz_stats["sha256"] == hashlib.sha256(TINY_NPZ.read_bytes()).hexdigest()
    assert (idx_stats["source_file"], npz_stats["source_file"]) == ("mnist_tiny", "mnist_tiny.npz")


def test_the_idx_parse_is_the_plain_reading_train_then_test_in_file_order_with_the_manifest_sha256():
    images, stats = parse("mnist", TINY_IDX, format="idx")
    shapes, data = {}, {}
    for name in MNIST_IDX_FILES:
        shapes[name], data[name] = plain_idx(TINY_IDX / name)
    assert shapes == {TRAIN_IMAGES: (12, 28, 28), TRAIN_LABELS: (12,), TEST_IMAGES: (6, 28, 28), TEST_LABELS: (6,)}
    assert images.images.tobytes() == data[TRAIN_IMAGES] + data[TEST_IMAGES]  # rows of 784 row-major pixels
    assert images.labels.tolist() == list(data[TRAIN_LABELS] + data[TEST_LABELS]) == \
        TINY_TRAIN_LABELS + TINY_TEST_LABELS
    assert images.split.tolist() == [0] * 12 + [1] * 6
    digests = {name: hashlib.sha256((TINY_IDX / name).read_bytes()).hexdigest() for name in MNIST_IDX_FILES}
    manifest = "".join(f"{digests[name]}  {name}\n" for name in MNIST_IDX_FILES)
    assert stats["files"] == digests
    assert stats["sha256"] == hashlib.sha256(manifest.encode()).hexdigest() == TINY_IDX_SHA256
    pixels = np.frombuffer(data[TRAIN_IMAGES], dtype=np.uint8)
    assert stats["train_pixel_mean"] == sum(pixels.tolist()) / pixels.size / 255


def test_the_npz_layout_is_keras_and_its_arrays_are_the_idx_files_arrays():
    arrays = tiny_arrays()
    assert {name: (a.shape, a.dtype) for name, a in arrays.items()} == {
        "x_train": ((12, 28, 28), np.uint8), "y_train": ((12,), np.uint8),
        "x_test": ((6, 28, 28), np.uint8), "y_test": ((6,), np.uint8)}
    assert arrays["x_train"].tobytes() == plain_idx(TINY_IDX / TRAIN_IMAGES)[1]
    assert arrays["y_test"].tolist() == TINY_TEST_LABELS


@pytest.mark.parametrize(("member", "magic"), [(TRAIN_IMAGES, 0x00000801), (TEST_LABELS, 0x00000803),
                                               (TRAIN_LABELS, 0x00000901)])
def test_a_wrong_magic_number_is_one_error_naming_the_file_and_both_numbers(member, magic, tmp_path):
    directory = copy_idx(tmp_path / "idx")
    shape, data = plain_idx(TINY_IDX / member)
    idx_file(directory / member, np.frombuffer(data, np.uint8).reshape(shape), magic=magic)
    expected = 0x00000801 if "labels" in member else 0x00000803
    with pytest.raises(DatasetError, match=f"{member}: wrong magic number {magic:#010x} in the IDX header; MNIST"
                                           f" .* have {expected:#010x}"):
        parse("mnist", directory, format="idx")


@pytest.mark.parametrize(("extra", "found"), [(b"\x00", 9409), (None, 9407)])
def test_a_body_of_another_size_than_its_header_announces_is_an_error(extra, found, tmp_path):
    directory = copy_idx(tmp_path / "idx")
    content = gzip.decompress((TINY_IDX / TRAIN_IMAGES).read_bytes())
    content = content + extra if extra is not None else content[:-1]
    (directory / TRAIN_IMAGES).write_bytes(gzip.compress(content))
    with pytest.raises(DatasetError, match=f"announces 12 x 28 x 28 = 9408 bytes of data, the file holds {found}"):
        parse("mnist", directory, format="idx")


def test_images_and_labels_of_different_counts_are_an_error(tmp_path):
    directory = copy_idx(tmp_path / "idx")
    idx_file(directory / TEST_LABELS, np.array([1, 0, 2, 9, 1], np.uint8))
    with pytest.raises(DatasetError, match=f"{TEST_IMAGES} holds 6 images but .*{TEST_LABELS} 5 labels"):
        parse("mnist", directory, format="idx")


def test_a_label_that_is_not_a_digit_is_an_error_naming_it(tmp_path):
    directory = copy_idx(tmp_path / "idx")
    idx_file(directory / TRAIN_LABELS, np.array(TINY_TRAIN_LABELS[:5] + [10] + TINY_TRAIN_LABELS[6:], np.uint8))
    with pytest.raises(DatasetError, match=f"{TRAIN_LABELS}: label 10 of image 5 is not a digit 0..9"):
        parse("mnist", directory, format="idx")


def test_splits_of_different_image_sizes_are_an_error(tmp_path):
    directory = copy_idx(tmp_path / "idx")
    idx_file(directory / TEST_IMAGES, np.zeros((6, 20, 20), np.uint8))
    with pytest.raises(DatasetError, match="the train images are 28 x 28 pixels, the test images 20 x 20"):
        parse("mnist", directory, format="idx")


@pytest.mark.parametrize("damage", ["missing", "truncated", "not gzip"])
def test_a_missing_or_corrupt_idx_file_is_an_error_naming_it(damage, tmp_path):
    directory = copy_idx(tmp_path / "idx")
    path = directory / TEST_IMAGES
    if damage == "missing":
        path.unlink()
        message = f"{TEST_IMAGES} is missing: a directory of MNIST IDX files holds {', '.join(MNIST_IDX_FILES)}"
    else:
        path.write_bytes(path.read_bytes()[:40] if damage == "truncated" else b"raw bytes, not gzip")
        message = f"{TEST_IMAGES} is a corrupt gzip file; delete it and fetch it again"
    with pytest.raises(DatasetError, match=message):
        parse("mnist", directory, format="idx")


def write_npz(path: Path, **replace) -> Path:
    """Keras' layout from the tiny arrays, ``replace`` mapping names to other arrays (None: left out)."""
    arrays = {**tiny_arrays(), **replace}
    np.savez(path, **{name: array for name, array in arrays.items() if array is not None})
    return path


@pytest.mark.parametrize(("replace", "message"), [
    ({"y_test": None}, "is not Keras' mnist.npz: it lacks the array\\(s\\) y_test \\(it needs x_train, y_train,"
                       " x_test, y_test\\)"),
    ({"x_train": np.zeros((12, 28, 28))}, "x_train must be a three-dimensional uint8 array .*got shape"
                                          " \\(12, 28, 28\\) of float64"),
    ({"x_test": np.zeros((6, 784), np.uint8)}, "x_test must be a three-dimensional uint8 array"),
    ({"y_train": np.zeros((12, 1), np.uint8)}, "y_train must be a one-dimensional integer array of labels"),
    ({"y_train": np.array(TINY_TRAIN_LABELS[:-1] + [-1])}, "y_train: label -1 of image 11 is not a digit 0..9"),
    ({"y_test": np.zeros(7, np.uint8)}, "x_test holds 6 images but .*y_test 7 labels"),
    ({"y_train": np.array(["a"] * 12, dtype=object)}, "is not a readable NumPy archive"),
])
def test_a_malformed_npz_is_one_error_naming_the_problem(replace, message, tmp_path):
    path = write_npz(tmp_path / "mnist.npz", **replace)
    with pytest.raises(DatasetError, match=message):
        parse("mnist", path, format="keras_npz")


@pytest.mark.parametrize("content", [b"not an archive at all", None])
def test_a_file_that_is_not_an_npz_or_is_cut_short_says_to_fetch_it_again(content, tmp_path):
    path = tmp_path / "mnist.npz"
    path.write_bytes(content if content is not None else TINY_NPZ.read_bytes()[:1000])
    with pytest.raises(DatasetError, match="is not a readable NumPy archive .*delete it and fetch it again"):
        parse("mnist", path, format="keras_npz")


def test_min_items_is_refused_for_mnist():
    with pytest.raises(DatasetError, match="min_items applies to kosarak only"):
        parse("mnist", TINY_IDX, format="idx", min_items=3)


# --------------------------------------------------------------------------------------------
# expect and the processed cache


def test_processing_either_format_writes_identical_npz_files_and_load_gives_the_images_back(tmp_path):
    expect = {key: TINY_STATS[key] for key in ("n", "d", "n_train", "label_counts")}
    from_idx = process("mnist", TINY_IDX, format="idx", processed_dir=tmp_path / "idx", expect=expect)
    from_npz = process("mnist", TINY_NPZ, format="keras_npz", processed_dir=tmp_path / "npz", expect=expect)
    assert (tmp_path / "idx/mnist.npz").read_bytes() == (tmp_path / "npz/mnist.npz").read_bytes()
    for record in (from_idx, from_npz):
        assert {key: record[key] for key in IMAGE_STATISTICS} == TINY_STATS
        assert record["splits"] == ["train", "test"] and record["expect"] == expect
    assert from_idx["files"][TRAIN_IMAGES] == hashlib.sha256((TINY_IDX / TRAIN_IMAGES).read_bytes()).hexdigest()
    assert json.loads((tmp_path / "idx/mnist.json").read_text()) == from_idx
    loaded, record = load("mnist", processed_dir=tmp_path / "npz")
    assert isinstance(loaded, LabelledImages) and same_images(loaded, parse("mnist", TINY_IDX)[0])
    assert record == from_npz
    with np.load(tmp_path / "idx/mnist.npz", allow_pickle=False) as archive:
        assert sorted(archive.files) == ["images", "labels", "split"]


def test_a_processed_image_dataset_that_disagrees_with_its_json_says_to_rerun_the_parse_step(tmp_path):
    process("mnist", TINY_IDX, processed_dir=tmp_path)
    record = json.loads((tmp_path / "mnist.json").read_text())
    record["label_counts"][9] += 1
    (tmp_path / "mnist.json").write_text(json.dumps(record))
    with pytest.raises(DatasetError, match="inconsistent \\(label_counts .* in the JSON.*rerun the workflow's parse"):
        load("mnist", processed_dir=tmp_path)


def test_the_mean_pixel_is_checked_to_the_precision_it_is_written_with(tmp_path):
    assert written_tolerance(0.1307) == pytest.approx(5e-5) and written_tolerance(0.03) == pytest.approx(5e-3)
    # the tiny files' 0.0337751...: 0.0338 and 0.03378 agree to their 4 and 5 decimals, 0.0337 and 0.03377 do not
    for written in (0.0338, 0.03378, 0.034):
        process("mnist", TINY_IDX, processed_dir=tmp_path, expect={"train_pixel_mean": written})
    for written in (0.0337, 0.03377):
        with pytest.raises(DatasetError, match=f"train_pixel_mean expected {written} \\(\\+- .*\\) found"
                                               f" {TINY_STATS['train_pixel_mean']} \\(MISMATCH\\)"):
            process("mnist", TINY_IDX, processed_dir=tmp_path / "x", expect={"train_pixel_mean": written})
    assert entries(tmp_path / "x") == []


def test_an_expect_mismatch_names_every_expected_and_found_value_and_writes_nothing(tmp_path):
    expect = {"n": 70000, "d": 784, "label_counts": [6903, 7877, 6990, 7141, 6824, 6313, 6876, 7293, 6825, 6958]}
    with pytest.raises(DatasetError) as caught:
        process("mnist", TINY_NPZ, format="keras_npz", processed_dir=tmp_path, expect=expect)
    message = str(caught.value)
    for part in ("n expected 70000 found 18 (MISMATCH)", "d expected 784 found 784,",
                 "label_counts expected [6903, 7877, 6990, 7141, 6824, 6313, 6876, 7293, 6825, 6958] found"
                 " [5, 5, 4, 1, 1, 0, 0, 1, 0, 1] (MISMATCH)",
                 f"sha256 {hashlib.sha256(TINY_NPZ.read_bytes()).hexdigest()}",
                 "set datasets.mnist.expect to the found values ({n: 18, d: 784, label_counts: [5, 5, 4, 1, 1, 0, 0, 1,"
                 " 0, 1]})"):
        assert part in message, message
    assert entries(tmp_path) == []


@pytest.mark.parametrize(("expect", "message"), [
    ({"tokens": 3}, "unknown key\\(s\\) in expect for mnist: tokens; known: n, d, n_train, label_counts,"
                    " train_label_counts, train_pixel_mean"),
    ({"label_counts": [1] * 9}, "label_counts for mnist must be a list of 10 integers >= 0"),
    ({"train_label_counts": [1] * 9 + [-1]}, "train_label_counts for mnist must be a list of 10 integers"),
    ({"train_pixel_mean": 1.5}, "train_pixel_mean for mnist must be a number in \\[0, 1\\]"),
    ({"train_pixel_mean": True}, "train_pixel_mean for mnist must be a number"),
    ({"n_train": 2.0}, "n_train for mnist must be an integer >= 0"),
    ({"git_blob": "0" * 40}, "unknown key\\(s\\) in expect for mnist: git_blob"),
])
def test_a_bad_expect_for_mnist_is_an_error_before_any_parsing(expect, message, tmp_path):
    with pytest.raises(DatasetError, match=message):
        process("mnist", tmp_path / "nowhere", processed_dir=tmp_path, expect=expect)


# --------------------------------------------------------------------------------------------
# fetching: the four IDX files from a base URL or a directory, Keras' npz


def serve_idx(server, prefix: str = "/mnist/", **actions) -> str:
    """The tiny IDX files under ``prefix`` (``actions``: a file's name with "-" for "_" and no
    suffix, e.g. t10k_labels_idx1_ubyte, -> the actions for it instead); returns the base URL."""
    for name in MNIST_IDX_FILES:
        key = name.removesuffix(".gz").replace("-", "_")
        url = server.script(prefix + name, *actions.get(key, [("file", (TINY_IDX / name).read_bytes())]))
    return url.removesuffix(MNIST_IDX_FILES[-1])


def test_an_idx_source_downloads_the_four_files_under_its_base_url_each_with_its_sha256(server, tmp_path):
    base = serve_idx(server)
    directory = fetch("mnist", url=base, format="idx", raw_dir=tmp_path, **FAST)
    assert directory == tmp_path / "mnist-idx"
    assert entries(directory) == sorted([*MNIST_IDX_FILES, *(f"{name}.sha256" for name in MNIST_IDX_FILES)])
    for name in MNIST_IDX_FILES:
        assert (directory / name).read_bytes() == (TINY_IDX / name).read_bytes()
        digest = hashlib.sha256((TINY_IDX / name).read_bytes()).hexdigest()
        assert (directory / f"{name}.sha256").read_text() == f"{digest}  {name}\n"
        assert server.count(f"/mnist/{name}") == 1
    assert same_images(parse("mnist", directory)[0], parse("mnist", TINY_IDX)[0])
    # a second fetch uses the cached files; a base URL without its final "/" names the same files
    fetch("mnist", url=base.rstrip("/"), format="idx", raw_dir=tmp_path, **FAST)
    assert sum(server.count(f"/mnist/{name}") for name in MNIST_IDX_FILES) == 4


def test_a_missing_idx_file_fails_naming_it_keeps_the_complete_ones_and_a_later_fetch_downloads_only_the_rest(
        server, tmp_path):
    base = serve_idx(server, t10k_images_idx3_ubyte=[("status", 404)])
    with pytest.raises(DatasetUnavailable) as caught:
        fetch("mnist", url=base, format="idx", raw_dir=tmp_path, **FAST)
    failure = caught.value
    assert failure.reason == f"{TEST_IMAGES}: HTTP 404 Not Found" and failure.url == base + TEST_IMAGES
    assert f"put the files {', '.join(MNIST_IDX_FILES)} in {tmp_path / 'mnist-idx'}/" in failure.how_to_supply
    assert "{path: <directory>, format: idx}" in failure.how_to_supply
    # the two files before it are complete and kept, nothing partial is left
    assert entries(tmp_path / "mnist-idx") == sorted([TRAIN_IMAGES, TRAIN_LABELS, f"{TRAIN_IMAGES}.sha256",
                                                      f"{TRAIN_LABELS}.sha256"])
    server.script(f"/mnist/{TEST_IMAGES}", ("file", (TINY_IDX / TEST_IMAGES).read_bytes()))
    directory = fetch("mnist", url=base, format="idx", raw_dir=tmp_path, **FAST)
    assert [server.count(f"/mnist/{name}") for name in MNIST_IDX_FILES] == [1, 1, 2, 1]
    assert parse("mnist", directory)[1]["sha256"] == TINY_IDX_SHA256


@pytest.mark.parametrize(("action", "reason"), [
    (("file", HTML_PAGE, "text/html"), "received an HTML page instead of data"),
    (("truncated", (TINY_IDX / TEST_LABELS).read_bytes() * 8), "truncated: got"),
    (("file", b"\x1f\x8b\x08 cut short gzip"), "corrupt gzip file"),
])
def test_a_bad_idx_file_download_is_rejected_naming_it_and_leaves_nothing_of_it(action, reason, server, tmp_path):
    base = serve_idx(server, t10k_labels_idx1_ubyte=[action])
    with pytest.raises(DatasetUnavailable, match=f"{TEST_LABELS}: {reason}"):
        fetch("mnist", url=base, format="idx", raw_dir=tmp_path, **FAST)
    assert TEST_LABELS not in entries(tmp_path / "mnist-idx")
    assert not [name for name in entries(tmp_path / "mnist-idx") if name.endswith(".part")]


def test_keras_npz_is_downloaded_validated_and_parses_like_the_idx_files(server, tmp_path):
    url = server.script("/tf/mnist.npz", ("file", TINY_NPZ.read_bytes()))
    path = fetch("mnist", url=url, format="keras_npz", raw_dir=tmp_path, **FAST)
    assert path == tmp_path / "mnist.npz" and path.read_bytes() == TINY_NPZ.read_bytes()
    assert same_images(parse("mnist", path, format="keras_npz")[0], parse("mnist", TINY_IDX)[0])


@pytest.mark.parametrize(("body", "reason"), [(HTML_PAGE, "received an HTML page instead of data"),
                                              (b"PK\x03\x04 not really a zip", "not a complete zip archive")])
def test_a_downloaded_npz_that_is_not_an_archive_is_rejected_and_leaves_nothing(body, reason, server, tmp_path):
    url = server.script("/mnist.npz", ("file", body))
    with pytest.raises(DatasetUnavailable, match=reason):
        fetch("mnist", url=url, format="keras_npz", raw_dir=tmp_path, **FAST)
    assert entries(tmp_path) == []


def test_an_npz_with_a_damaged_member_fails_its_crc_check(tmp_path):
    damaged = bytearray(TINY_NPZ.read_bytes())
    with zipfile.ZipFile(TINY_NPZ) as archive:
        info = archive.getinfo("x_train.npy")
    at = info.header_offset + 30 + len(info.filename) + 20  # inside the member's compressed data
    damaged[at] ^= 0xFF
    path = tmp_path / "copy.npz"
    path.write_bytes(bytes(damaged))
    with pytest.raises(DatasetUnavailable, match="copy.npz: (corrupt zip archive|not a complete zip archive)"):
        fetch("mnist", path=path, format="keras_npz", raw_dir=tmp_path / "raw")


def test_a_local_directory_of_idx_files_is_validated_and_used_in_place_without_any_request(server, tmp_path):
    assert fetch("mnist", path=TINY_IDX, format="idx", raw_dir=tmp_path) == TINY_IDX
    assert entries(tmp_path) == [] and server.requests == []


@pytest.mark.parametrize(("damage", "reason"), [
    ("absent", "no such directory"),
    ("a file", "not a directory (give the directory of the files)"),
    ("a file missing", f"{TRAIN_LABELS}: no such file"),
    ("an HTML page", f"{TEST_IMAGES}: an HTML page, not data"),
    ("a cut gzip", f"{TEST_IMAGES}: corrupt gzip file"),
])
def test_an_unusable_local_directory_raises_naming_it_and_the_file(damage, reason, tmp_path):
    directory = tmp_path / "local"
    if damage == "a file":
        shutil.copy(TINY_NPZ, directory)
    elif damage == "a file missing":
        (copy_idx(directory) / TRAIN_LABELS).unlink()
    elif damage != "absent":
        (copy_idx(directory) / TEST_IMAGES).write_bytes(HTML_PAGE if damage == "an HTML page" else b"\x1f\x8b\x08\x00")
    with pytest.raises(DatasetUnavailable) as caught:
        fetch("mnist", path=directory, format="idx", raw_dir=tmp_path / "raw")
    assert caught.value.source == str(directory) and caught.value.reason == reason


def test_an_idx_file_placed_by_hand_is_used_and_never_overwritten_when_corrupt(server, tmp_path):
    directory = tmp_path / "mnist-idx"
    directory.mkdir()
    shutil.copy(TINY_IDX / TRAIN_IMAGES, directory)  # placed by hand, no .sha256
    base = serve_idx(server)
    fetch("mnist", url=base, format="idx", raw_dir=tmp_path, **FAST)
    assert server.count(f"/mnist/{TRAIN_IMAGES}") == 0 and (directory / f"{TRAIN_IMAGES}.sha256").exists()
    (directory / TEST_LABELS).write_bytes(b"garbage")
    with pytest.raises(DatasetUnavailable, match=f"{directory / TEST_LABELS} exists but is not usable \\(corrupt gzip"
                                                 f" file\\); delete it to download it again"):
        fetch("mnist", url=base, format="idx", raw_dir=tmp_path, **FAST)
    assert (directory / TEST_LABELS).read_bytes() == b"garbage"


def test_the_default_sources_are_the_two_idx_mirrors_then_keras_npz():
    assert [source.as_dict() for source in REAL_DATASETS["mnist"].sources] == [
        {"url": "https://ossci-datasets.s3.amazonaws.com/mnist/", "format": "idx"},
        {"url": "https://storage.googleapis.com/cvdf-datasets/mnist/", "format": "idx"},
        {"url": "https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz", "format": "keras_npz"}]
    assert sources_of("mnist", [{"path": "/data/mnist"}])[0].format == "idx"


# --------------------------------------------------------------------------------------------
# obtain: the sources in order


def test_with_the_first_mirror_dead_the_second_idx_mirror_is_used_and_recorded(server, tmp_path):
    dead = server.script(f"/dead/{TRAIN_IMAGES}", ("status", 503)).removesuffix(TRAIN_IMAGES)
    base = serve_idx(server, prefix="/mirror/")
    found = obtain("mnist", sources=[{"url": dead, "format": "idx"}, {"url": base, "format": "idx"}],
                   expect={"n": 18, "label_counts": TINY_STATS["label_counts"]}, raw_dir=tmp_path, retries=1,
                   backoff=0.01, timeout=(2.0, 2.0))
    assert found["raw"] == str(tmp_path / "mnist-idx") and found["source"] == {"url": base, "format": "idx"}
    assert found["sha256"] == TINY_IDX_SHA256 and found["statistics"] == TINY_STATS
    assert found["tried"] == [{"url": dead, "format": "idx",
                               "reason": f"{TRAIN_IMAGES}: HTTP 503 Service Unavailable (after 2 attempts)"}]


def test_an_idx_set_that_fails_expect_is_deleted_file_by_file_and_the_npz_is_used(server, tmp_path, caplog):
    base = serve_idx(server)
    npz = server.script("/mnist.npz", ("file", TINY_NPZ.read_bytes()))
    (tmp_path / "mnist-idx").mkdir()
    shutil.copy(TINY_IDX / TRAIN_IMAGES, tmp_path / "mnist-idx")  # there before: kept
    expect = {"n": 18, "train_pixel_mean": 0.0338}
    # an IDX set whose test labels are other digits: 18 images, but other label counts
    server.script(f"/mnist/{TEST_LABELS}", ("file", idx_file(tmp_path / "labels.gz", np.full(6, 9, np.uint8))
                                             .read_bytes()))
    with caplog.at_level(logging.WARNING, logger="datasets.real"):
        found = obtain("mnist", sources=[{"url": base, "format": "idx"}, {"url": npz, "format": "keras_npz"}],
                       expect={**expect, "label_counts": TINY_STATS["label_counts"]}, raw_dir=tmp_path, **FAST)
    assert found["raw"] == str(tmp_path / "mnist.npz") and found["source"]["format"] == "keras_npz"
    reason = found["tried"][0]["reason"]
    assert "label_counts expected [5, 5, 4, 1, 1, 0, 0, 1, 0, 1] found [3, 3, 3, 1, 1, 0, 0, 1, 0, 6]" in reason
    assert "The download was deleted" in reason and f"{tmp_path / 'mnist-idx' / TRAIN_IMAGES} was kept" in reason
    assert entries(tmp_path / "mnist-idx") == [TRAIN_IMAGES, f"{TRAIN_IMAGES}.sha256"]


def test_every_mnist_source_failing_says_where_the_files_go_and_how_to_list_a_local_copy(server, tmp_path):
    sources = [{"url": server.script("/a/x", ("status", 404)).removesuffix("x"), "format": "idx"},
               {"url": server.script("/b.npz", ("status", 404)), "format": "keras_npz"}]
    with pytest.raises(DatasetUnavailable) as caught:
        obtain("mnist", sources=sources, raw_dir=tmp_path, **FAST)
    failure = caught.value
    assert [entry["reason"] for entry in failure.tried] == [f"{TRAIN_IMAGES}: HTTP 404 Not Found", "HTTP 404 Not Found"]
    assert failure.how_to_supply == (
        f"put the files {', '.join(MNIST_IDX_FILES)} in {tmp_path / 'mnist-idx'}/ (format idx) or the file"
        f" {tmp_path / 'mnist.npz'} (format keras_npz), or list a local copy as {{path: <file or directory>, format:"
        " idx or keras_npz} first under datasets.mnist.sources in the config, or a mirror as {url: <mirror>, format:"
        " idx or keras_npz}")
    assert entries(tmp_path) == []  # no file, no temporary file, no empty directory
