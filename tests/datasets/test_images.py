"""Labelled images (datasets/images.py, docs/design.md §7): the MNIST-shaped stand-in and the subset a
data source hands the mechanisms (scaled pixels, the prior ball and universe of the IOME authors'
MNIST runs)."""
import hashlib
import math
import subprocess
import sys

import numpy as np
import pytest

from datasets import LabelledImages, image_sample, mnist_shaped
from datasets.images import MNIST_SHAPED_SEED, mnist_shaped_size
from testkit.workflow_runs import REPO


@pytest.fixture(scope="module")
def standin() -> LabelledImages:
    return mnist_shaped()


def test_the_standin_has_mnists_shape_dtype_range_labels_and_split(standin):
    assert standin.images.shape == (70_000, 784) and standin.images.dtype == np.uint8
    assert standin.labels.shape == standin.split.shape == (70_000,)
    assert standin.labels.dtype == standin.split.dtype == np.uint8
    assert standin.images.min() == 0 and standin.images.max() == 255
    assert np.bincount(standin.split).tolist() == [60_000, 10_000]
    # balanced classes, our choice: 6000 per digit in train, 1000 in test
    assert np.bincount(standin.labels[standin.split == 0], minlength=10).tolist() == [6000] * 10
    assert np.bincount(standin.labels[standin.split == 1], minlength=10).tolist() == [1000] * 10


def test_the_standin_is_image_like_far_from_gaussian_with_a_zero_border(standin):
    squares = standin.images.reshape(-1, 28, 28)
    for border in (squares[:, :2], squares[:, -2:], squares[:, :, :2], squares[:, :, -2:]):
        assert not border.any()  # like MNIST, the digits stay inside the image
    assert (standin.images == 0).mean() > 0.7  # most pixels are blank
    ink = standin.images[standin.images > 0]
    assert (ink == 255).mean() > 0.05  # stroke cores saturate
    for digit in range(10):
        rows = standin.images[standin.rows(digit=digit, split="train")]
        inked = np.count_nonzero(rows.max(axis=0))
        assert 100 <= inked <= 500, (digit, inked)  # a few hundred active pixels per class
        per_image = np.count_nonzero(rows, axis=1)
        assert per_image.min() > 20  # every image has a stroke
    # pixels are not Gaussian: an inked pixel of a class is 0 in some images and bright in others
    zero_rows = standin.images[standin.rows(digit=0, split="train")]
    column = zero_rows[:, np.argmax(np.count_nonzero(zero_rows, axis=0))]
    assert (column == 0).any() and (column >= 200).any()


def test_the_classes_are_different_patterns(standin):
    means = np.stack([standin.images[standin.rows(digit=d, split="train")].mean(axis=0) for d in range(10)])
    distances = np.linalg.norm(means[:, None] - means[None], axis=-1)
    spread = np.mean([np.linalg.norm(standin.images[standin.rows(digit=d, split="train")] - means[d], axis=1).mean()
                      for d in range(10)])
    off_diagonal = distances[~np.eye(10, dtype=bool)]
    assert off_diagonal.min() > 0.25 * spread  # every pair of classes is apart


def test_every_subset_is_the_same_rows_as_in_the_whole_set(standin):
    for split in ("train", "test", "all"):
        for digit in (None, 0, 7):
            subset = mnist_shaped(digit=digit, split=split)
            rows = standin.rows(digit=digit, split=split)
            assert subset.images.tobytes() == standin.images[rows].tobytes()
            assert subset.labels.tolist() == standin.labels[rows].tolist()
            assert subset.split.tolist() == standin.split[rows].tolist()
            assert mnist_shaped_size(digit=digit, split=split) == rows.size


def test_the_standin_depends_on_its_seed_alone_the_same_bytes_in_a_fresh_process():
    code = ("import hashlib; from datasets import mnist_shaped; "
            "print(hashlib.sha256(mnist_shaped(digit=3, split='test').images.tobytes()).hexdigest())")
    fresh = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    here = hashlib.sha256(mnist_shaped(digit=3, split="test").images.tobytes()).hexdigest()
    assert fresh.stdout.strip() == here
    other = mnist_shaped(seed=MNIST_SHAPED_SEED + 1, digit=3, split="test")
    assert other.images.tobytes() != mnist_shaped(digit=3, split="test").images.tobytes()


def test_smaller_splits_keep_balanced_classes_the_lower_digits_taking_the_remainder():
    small = mnist_shaped(n_train=23, n_test=4)
    assert np.bincount(small.labels[small.split == 0], minlength=10).tolist() == [3, 3, 3, 2, 2, 2, 2, 2, 2, 2]
    assert np.bincount(small.labels[small.split == 1], minlength=10).tolist() == [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    assert mnist_shaped(n_train=23, n_test=4, digit=9, split="test").images.shape == (0, 784)


def test_the_cached_arrays_are_read_only():
    images = mnist_shaped(digit=1, split="test")
    with pytest.raises(ValueError, match="read-only"):
        images.images[0, 0] = 1


@pytest.mark.parametrize(("arguments", "message"), [
    ({"seed": -1}, "seed must be an integer >= 0, got seed=-1"),
    ({"seed": 1.5}, "seed must be an integer >= 0"),
    ({"digit": 10}, "digit must be None or an integer in 0..9, got digit=10"),
    ({"digit": True}, "digit must be None or an integer in 0..9, got digit=True"),
    ({"digit": [1]}, "digit must be None or an integer in 0..9"),
    ({"split": "validation"}, "split must be one of train, test, all, got split='validation'"),
    ({"n_train": 0}, "n_train must be a positive integer, got n_train=0"),
])
def test_bad_arguments_of_the_standin_are_one_error_naming_the_value(arguments, message):
    with pytest.raises(ValueError, match=message.replace("[", "\\[").replace("(", "\\(")):
        mnist_shaped(**arguments)


# --------------------------------------------------------------------------------------------
# image_sample: the subset a data source hands the mechanisms


def labelled(labels, split, *, rng=None) -> LabelledImages:
    rng = rng or np.random.default_rng(0)
    return LabelledImages(images=rng.integers(0, 256, size=(len(labels), 784), dtype=np.uint8),
                          labels=np.array(labels, np.uint8), split=np.array(split, np.uint8))


def test_the_sample_is_the_subsets_scaled_pixels_with_the_iome_authors_ball_and_universe():
    images = labelled([0, 1, 0, 2, 0, 0], [0, 0, 0, 0, 1, 1])
    sample = image_sample(images, digit=0, split="train", scale=1 / 255, radius_scale=50.0, what="these images")
    assert sample.x.dtype == np.float64 and sample.x.shape == (2, 784)
    np.testing.assert_array_equal(sample.x, images.images[[0, 2]] * (1 / 255))  # pixels x scale
    assert sample.true_mean is None and sample.true_std is None  # empirical mean estimation
    radius = 50.0 * math.sqrt(784)
    assert radius == 1400.0 and sample.prior_ball.radius == radius
    np.testing.assert_array_equal(sample.prior_ball.centre, np.zeros(784))
    assert sample.bounds == (-2800.0, 2800.0)  # u = 2R
    everything = image_sample(images, digit=None, split="all", scale=2.0, radius_scale=1000.0, what="these images")
    np.testing.assert_array_equal(everything.x, images.images * 2.0)
    assert image_sample(images, digit=0, split="test", scale=0.1, radius_scale=50.0, what="x").x.shape == (2, 784)


def test_a_mean_outside_the_prior_ball_or_an_empty_subset_is_one_error_naming_it():
    images = labelled([0, 1, 0], [0, 0, 1])
    with pytest.raises(ValueError, match="the mean of these images's digit 0 of split 'train' lies outside the"
                                         " prior ball B\\(0, R\\), R = radius_scale sqrt\\(d\\) = 0.028 .*widen"):
        image_sample(images, digit=0, split="train", scale=1 / 255, radius_scale=0.001, what="these images")
    with pytest.raises(ValueError, match="these images has no images of digit 2 of split 'all'"):
        image_sample(images, digit=2, split="all", scale=1.0, radius_scale=50.0, what="these images")


@pytest.mark.parametrize(("arguments", "message"), [
    ({"digit": -1}, "digit must be None or an integer in 0..9"),
    ({"split": "train "}, "split must be one of train, test, all"),
    ({"scale": 0.0}, "scale must be > 0, got scale=0.0"),
    ({"scale": float("nan")}, "scale must be a finite real number"),
    ({"radius_scale": -50.0}, "radius_scale must be > 0, got radius_scale=-50.0"),
])
def test_bad_arguments_of_the_sample_are_one_error_naming_the_value(arguments, message):
    with pytest.raises(ValueError, match=message):
        image_sample(labelled([0], [0]), **{"digit": 0, "split": "train", "scale": 1.0, "radius_scale": 50.0,
                                           "what": "x", **arguments})
