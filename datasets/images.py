"""Labelled images for empirical mean estimation (docs/design.md §7): MNIST as the workflow parses it,
and an MNIST-shaped stand-in.

:class:`LabelledImages` holds n images of d pixels, one row per image (uint8, 0..255), with their
digit labels and their split (train or test). :func:`mnist_shaped` makes the stand-in: synthetic
images of MNIST's shape from a generator of its own, the same rows for the same seed (like a real
dataset, never the trial's randomness). :func:`image_sample` is the rows of one digit and split as
a data source hands them to the mechanisms: scaled pixels, no known distribution (the error is
measured against the rows' own mean) and the IOME authors' prior ball and universe.
"""
from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass

import numpy as np

from datasets.checks import check_positive_int, check_real
from datasets.sample import PriorBall, Sample

SPLITS = ("train", "test")  # a row's split code is its index here
SUBSETS = SPLITS + ("all",)  # what image_sample and mnist_shaped select
DIGITS = 10
SIDE = 28  # MNIST's images are 28 x 28 pixels (docs/design.md §7)
PIXELS = SIDE * SIDE

# The stand-in (docs/design.md §7): its default seed, and how its images vary. All of these are our
# choices; only the shape (sizes, value range, ten classes) is MNIST's.
MNIST_SHAPED_SEED = 20211206
_VARIANTS = 2  # stroke prototypes per class; an image blends the two
_CURVE_POINTS = 40  # points sampled along a prototype's Bezier stroke
_CONTROL_BOX = (7.0, 20.0)  # control points' rows and columns: strokes stay in the centre
_STROKE_WIDTH = (0.9, 1.4)  # the Gaussian profile's sigma across a stroke, in pixels
_INK_FLOOR = 0.1  # profile values below this are no ink: the stroke ends within 2.2 sigma < 3.1 pixels
_MAX_SHIFT = 2  # images are shifted by -2..2 pixels in each direction
_INTENSITY = (0.75, 1.0)  # an image's ink scale
_GAIN = 2.0 * 255  # a stroke's core saturates at 255, as MNIST's do


@dataclass(frozen=True, eq=False)
class LabelledImages:
    """n images of d pixels: ``images`` (n, d) uint8, one row per image (row-major pixels);
    ``labels`` (n,) uint8 digits 0..9; ``split`` (n,) uint8 codes, 0 for train and 1 for test
    (:data:`SPLITS`)."""

    images: np.ndarray
    labels: np.ndarray
    split: np.ndarray

    def rows(self, *, digit: int | None = None, split: str = "all") -> np.ndarray:
        """The indices of the rows of ``digit`` (None: every digit) in ``split`` ("train",
        "test" or "all"), in row order."""
        _check_digit(digit)
        _check_subset(split)
        keep = np.ones(self.labels.shape[0], dtype=bool)
        if digit is not None:
            keep &= self.labels == digit
        if split != "all":
            keep &= self.split == SPLITS.index(split)
        return np.flatnonzero(keep)


def image_sample(images: LabelledImages, *, digit: int | None, split: str, scale: float, radius_scale: float,
                 what: str) -> Sample:
    """The rows of ``digit`` (None: all) in ``split`` of ``images``, as float64 pixels times
    ``scale``, for empirical mean estimation as the IOME paper's Section 6.1 runs it on MNIST
    (Figures 7 and 8; docs/design.md §7): ``true_mean`` and ``true_std`` None, so the error is
    measured against the rows' own mean (``error_vs_empirical``); the public prior ball B(0, R),
    R = ``radius_scale`` sqrt(d) (the authors' ``rfact`` = 50: R = 1400 for d = 784); and the
    universe ``bounds = (-2R, 2R)``: the authors give Shifted-CM and CM u = 2R, which IOME reads
    from the universe (docs/design.md §5.5: the centre searched on [-u / sqrt(D'), u / sqrt(D')],
    the clipping threshold on [0, u]). ``what`` names the images in messages.

    The mean of the rows must lie in the ball (the prior CoinPress is promised, docs/design.md
    §5.9); a subset without rows, or a mean outside the ball, raises one ValueError naming it.
    """
    _check_digit(digit)
    _check_subset(split)
    check_real(scale=scale)
    if scale <= 0:
        raise ValueError(f"scale must be > 0, got scale={scale!r}")
    check_real(radius_scale=radius_scale)
    if radius_scale <= 0:
        raise ValueError(f"radius_scale must be > 0, got radius_scale={radius_scale!r}")
    indices = images.rows(digit=digit, split=split)
    subset = f"{'every digit' if digit is None else f'digit {digit}'} of split {split!r}"
    if not indices.size:
        raise ValueError(f"{what} has no images of {subset}")
    x = images.images[indices].astype(np.float64)
    x *= scale
    d = x.shape[1]
    radius = float(radius_scale) * math.sqrt(d)
    distance = float(np.linalg.norm(x.mean(axis=0)))
    if distance > radius:
        raise ValueError(f"the mean of {what}'s {subset} lies outside the prior ball B(0, R), R = radius_scale"
                         f" sqrt(d) = {radius:.6g} (its norm is {distance:.6g}); widen radius_scale")
    return Sample(x=x, true_mean=None, true_std=None, bounds=(-2.0 * radius, 2.0 * radius),
                  prior_ball=PriorBall(np.zeros(d), radius))


def mnist_shaped(*, seed: int = MNIST_SHAPED_SEED, digit: int | None = None, split: str = "all",
                 n_train: int = 60_000, n_test: int = 10_000) -> LabelledImages:
    """A stand-in for MNIST (docs/design.md §7): ``n_train`` + ``n_test`` synthetic images of 28 x 28
    uint8 pixels in ten classes, the rows of ``digit`` (None: all) in ``split`` ("train", "test"
    or "all") of it. NOT MNIST: nothing in it comes from MNIST but its shape (60,000 + 10,000
    images, 784 pixels in 0..255, ten labels).

    Deterministic in ``seed`` alone (its own generator, not a trial's: the same rows in every
    trial, as a real dataset's), and every subset holds exactly the rows it has in the whole set
    (each split and class is a block drawn from its own stream), so a digit's rows cost only
    themselves (about 0.05 s for 6,000 images; the whole set 0.25 s). Results are cached per
    process; the arrays returned are read-only.

    How it is made (our choices): every class has two prototype strokes, cubic Bezier curves
    through four random control points in the image's centre, drawn with a Gaussian profile
    (width sigma 0.9 to 1.4 pixels) cut to zero below a tenth of its peak. An image of a class
    blends its two prototypes with a uniform weight, is shifted by -2..2 pixels in each
    direction, scaled by an ink intensity in [0.75, 1] and by 2 x 255, rounded and clipped to
    0..255 (so stroke cores saturate at 255). Hence, like MNIST's digits, the images are far from
    Gaussian: most pixels are 0, a border of at least two pixels always is, and each class inks
    a few hundred pixels. The classes are balanced (each split divided as evenly as it goes,
    the lower digits taking the remainder), which MNIST's are not exactly. Rows are grouped by
    split, then by digit.
    """
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got seed={seed!r}")
    _check_digit(digit)
    _check_subset(split)
    check_positive_int(n_train=n_train)
    check_positive_int(n_test=n_test)
    return _mnist_shaped(int(seed), None if digit is None else int(digit), split, int(n_train), int(n_test))


def mnist_shaped_size(*, digit: int | None = None, split: str = "all", n_train: int = 60_000,
                      n_test: int = 10_000) -> int:
    """The number of rows :func:`mnist_shaped` returns for these arguments, without making them."""
    _check_digit(digit)
    _check_subset(split)
    sizes = [n_train, n_test] if split == "all" else [(n_train, n_test)[SPLITS.index(split)]]
    return int(sum(_class_counts(size)[digit] if digit is not None else size for size in sizes))


@functools.lru_cache(maxsize=8)
def _mnist_shaped(seed: int, digit: int | None, split: str, n_train: int, n_test: int) -> LabelledImages:
    sizes = (n_train, n_test)
    digits = range(DIGITS) if digit is None else [digit]
    splits = range(len(SPLITS)) if split == "all" else [SPLITS.index(split)]
    blocks = [(code, label, int(_class_counts(sizes[code])[label])) for code in splits for label in digits]
    blocks = [block for block in blocks if block[2]]
    if not blocks:
        images = np.zeros((0, PIXELS), dtype=np.uint8)
    else:
        images = np.concatenate([_class_block(seed, code, label, count) for code, label, count in blocks])
    labels = np.repeat(np.array([label for _, label, _ in blocks], dtype=np.uint8), [c for _, _, c in blocks])
    codes = np.repeat(np.array([code for code, _, _ in blocks], dtype=np.uint8), [c for _, _, c in blocks])
    for array in (images, labels, codes):
        array.flags.writeable = False  # shared by every caller in the process
    return LabelledImages(images=images, labels=labels, split=codes)


def _class_counts(total: int) -> np.ndarray:
    """Balanced class sizes summing to ``total``: the first total % 10 digits take one more."""
    counts = np.full(DIGITS, total // DIGITS, dtype=np.int64)
    counts[: total % DIGITS] += 1
    return counts


def _class_block(seed: int, code: int, label: int, count: int) -> np.ndarray:
    """``count`` images of class ``label`` in split ``code``, from their own stream: the same rows
    whatever else is drawn."""
    shifted = _shifted_prototypes(seed, label)  # (variants, shifts, PIXELS) float32
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1 + code, label)))
    shift = rng.integers(0, shifted.shape[1], size=count)
    weight = rng.random(count, dtype=np.float32)[:, None]
    intensity = rng.uniform(*_INTENSITY, size=count).astype(np.float32)[:, None]
    pixels = shifted[0][shift]  # (count, PIXELS): gathered, a new array
    pixels *= weight
    pixels += (1 - weight) * shifted[1][shift]
    pixels *= _GAIN * intensity
    np.clip(pixels, 0, 255, out=pixels)
    np.rint(pixels, out=pixels)
    return pixels.astype(np.uint8)


@functools.lru_cache(maxsize=2 * DIGITS)
def _shifted_prototypes(seed: int, label: int) -> np.ndarray:
    """Class ``label``'s prototype strokes (profile values in [0, 1]) at every shift, as
    (variants, (2 max_shift + 1)^2, PIXELS) float32. The strokes end at least three pixels inside
    the image and shifts move them at most two, so shifting by rolling wraps only zeros."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0, label)))
    controls = rng.uniform(*_CONTROL_BOX, size=(_VARIANTS, 4, 2))
    widths = rng.uniform(*_STROKE_WIDTH, size=_VARIANTS)
    t = np.linspace(0.0, 1.0, _CURVE_POINTS)[:, None]
    # cubic Bezier: sum_k binom(3, k) (1 - t)^(3 - k) t^k P_k, for every variant at once
    basis = np.stack([(1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t ** 2, t ** 3], axis=1)[..., 0]
    curves = np.einsum("pk,vkc->vpc", basis, controls)  # (variants, points, 2)
    grid = np.stack(np.divmod(np.arange(PIXELS), SIDE), axis=1).astype(np.float64)  # (row, column) of each pixel
    squared = ((grid[None, :, None, :] - curves[:, None, :, :]) ** 2).sum(axis=-1).min(axis=2)  # (variants, PIXELS)
    profile = np.exp(-squared / (2 * widths[:, None] ** 2))
    profile[profile < _INK_FLOOR] = 0.0
    offsets = [(dy, dx) for dy in range(-_MAX_SHIFT, _MAX_SHIFT + 1) for dx in range(-_MAX_SHIFT, _MAX_SHIFT + 1)]
    squares = profile.reshape(_VARIANTS, SIDE, SIDE)
    shifted = np.stack([np.roll(squares, offset, axis=(1, 2)) for offset in offsets], axis=1)
    return shifted.reshape(_VARIANTS, len(offsets), PIXELS).astype(np.float32)


def _check_digit(digit) -> None:
    if digit is not None and (isinstance(digit, bool) or not isinstance(digit, numbers.Integral)
                              or not 0 <= digit < DIGITS):
        raise ValueError(f"digit must be None or an integer in 0..9, got digit={digit!r}")


def _check_subset(split) -> None:
    if split not in SUBSETS:
        raise ValueError(f"split must be one of {', '.join(SUBSETS)}, got split={split!r}")
