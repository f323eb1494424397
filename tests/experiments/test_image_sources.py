"""The data sources of the IOME paper's empirical mean estimation (experiments/engine/sources.py, docs/design.md
§7): `mnist` reads the processed real dataset, `mnist_shaped` the stand-in; what makes an
experiment one on a real dataset (REAL_DATASET_SOURCES: config checks, job sizes and kind,
scorecard, fetch statuses, Figure 2); and trials through the engine."""
import copy
import json
import math
from pathlib import Path

import numpy as np
import pytest

from datasets import mnist_shaped as standin_images
from datasets.real import MNIST_IDX_FILES, DatasetError, parse, process
from experiments.engine import sources
from experiments.engine.config import ConfigError, load_experiments
from experiments.outputs import scorecard
from experiments.planning import resources
from experiments.planning.config_files import load_config
from experiments.planning.run_plan import RunPlan
from mechanisms.quantiles import MIN_STACK_ROW
from testkit.engine import run_one_cell

DATA = Path(__file__).resolve().parents[1] / "data"
ROOT = Path(__file__).resolve().parents[2]
TINY_IDX = DATA / "mnist_tiny"
# the tiny files (tests/data/README.md): 12 train images (digits 0 1 2 0 1 2 0 1 3 4 2 7), 6 test ones
TINY_EXPECT = {"n": 18, "d": 784, "n_train": 12, "label_counts": [5, 5, 4, 1, 1, 0, 0, 1, 0, 1],
               "train_label_counts": [3, 3, 3, 1, 1, 0, 0, 1, 0, 0]}
IMAGE_MECHANISMS = [{"IOME": {"algorithm": "iome", "search_steps": 10}},
                    {"CoinPress-t2": {"algorithm": "coinpress_mean", "steps": 2, "covariance": "identity"}},
                    "empirical_mean"]


@pytest.fixture(scope="module")
def processed(tmp_path_factory):
    """The tiny MNIST files processed as the workflow's parse step does."""
    folder = tmp_path_factory.mktemp("processed")
    process("mnist", TINY_IDX, processed_dir=folder, expect=TINY_EXPECT)
    return folder


def experiment(source="mnist", data=None, grid=None, **entry):
    return {"data": {"source": source, **(data or {})}, "grid": {"rho": [0.5], **(grid or {})}, "trials": 2,
            "mechanisms": copy.deepcopy(IMAGE_MECHANISMS), **entry}


def config_with(experiments, datasets=None):
    return {"seed": 5, "experiments": experiments,
            "datasets": {"mnist": {"sources": [{"path": str(TINY_IDX), "format": "idx"}], "expect": TINY_EXPECT}}
            if datasets is None else datasets}


# --------------------------------------------------------------------------------------------
# the sources


def test_mnist_reads_the_processed_images_of_a_digit_scaled_with_the_iome_authors_ball(processed):
    rng = np.random.default_rng(1)
    state = rng.bit_generator.state
    sample = sources.mnist(rng=rng, digit=0, processed_dir=str(processed))
    images, _ = parse("mnist", TINY_IDX)
    np.testing.assert_array_equal(sample.x, images.images[[0, 3, 6]] * (1 / 255))  # the train images of digit 0
    assert rng.bit_generator.state == state  # the same rows every trial: nothing drawn
    assert sample.true_mean is None and sample.true_std is None
    assert sample.prior_ball.radius == 50 * math.sqrt(784) == 1400 and sample.bounds == (-2800.0, 2800.0)
    assert sources.mnist(rng=rng, digit=None, split="all", processed_dir=str(processed)).x.shape == (18, 784)
    assert sources.mnist(rng=rng, digit=2, split="test", scale=1.0, processed_dir=str(processed)).x.shape == (1, 784)


def test_mnist_unprocessed_or_of_the_wrong_kind_is_one_error_naming_it(processed, tmp_path):
    rng = np.random.default_rng(1)
    with pytest.raises(DatasetError, match=f"dataset 'mnist' is not processed: {tmp_path}/mnist.npz is missing"):
        sources.mnist(rng=rng, processed_dir=str(tmp_path))
    with pytest.raises(DatasetError, match="data source 'mnist' reads the images datasets \\(mnist\\), got"
                                           " dataset='pos'"):
        sources.mnist(rng=rng, dataset="pos", processed_dir=str(processed))
    with pytest.raises(DatasetError, match="data source 'real_dataset' reads the binary datasets \\(kosarak, pos\\),"
                                           " got dataset='mnist'"):
        sources.real_dataset(rng=rng, dataset="mnist", processed_dir=str(processed))
    with pytest.raises(ValueError, match="dataset 'mnist' has no images of digit 5 of split 'train'"):
        sources.mnist(rng=rng, digit=5, processed_dir=str(processed))


def test_mnist_shaped_is_the_standin_subset_whatever_the_trials_generator():
    first = sources.mnist_shaped(rng=np.random.default_rng(1), digit=4)
    second = sources.mnist_shaped(rng=np.random.default_rng(2), digit=4)
    np.testing.assert_array_equal(first.x, second.x)
    images = standin_images(digit=4, split="train")
    np.testing.assert_array_equal(first.x, images.images * (1 / 255))
    assert first.x.shape == (6000, 784) and first.prior_ball.radius == 1400.0 and first.true_mean is None
    other_seed = sources.mnist_shaped(rng=np.random.default_rng(1), digit=4, seed=7)
    assert not np.array_equal(other_seed.x, first.x)


def test_which_sources_read_a_real_dataset():
    assert sources.REAL_DATASET_SOURCES == {"real_dataset": "binary", "mnist": "images"}
    assert sources.real_dataset_of("mnist", {}) == "mnist"  # its default
    assert sources.real_dataset_of("mnist", (("dataset", "mnist"), ("digit", 1))) == "mnist"
    assert sources.real_dataset_of("real_dataset", {"dataset": "pos"}) == "pos"
    assert sources.real_dataset_of("mnist_shaped", {"digit": 1}) is None
    assert sources.real_dataset_of("gaussian_a", {"n": 5}) is None


# --------------------------------------------------------------------------------------------
# configs, job sizes, scorecard


def test_an_mnist_experiment_reads_its_dataset_and_sizes_its_jobs_by_the_subset_as_dense_rows():
    specs = load_experiments(config_with({
        "digit1": experiment(data={"digit": 1}),
        "digits": experiment(grid={"digit": [0, 1, 2]}),
        "all": experiment(data={"split": "all"}),
        "standin": experiment("mnist_shaped", data={"digit": 0}),
        "standin_all": experiment("mnist_shaped", data={"split": "all"}),
    }))
    assert specs["digit1"].dataset == specs["digits"].dataset == "mnist" and specs["standin"].dataset is None
    assert dict(specs["digit1"].size_hint) == {"d": 784, "n": 3}  # the train images of digit 1
    assert dict(specs["digits"].size_hint) == {"d": 784, "n": 3}  # the largest digit of the grid
    assert dict(specs["all"].size_hint) == {"d": 784, "n": 18}
    assert dict(specs["standin"].size_hint) == {"d": 784, "n": 6000}
    assert dict(specs["standin_all"].size_hint) == {"d": 784, "n": 70_000}
    for name in ("digit1", "standin"):
        spec = specs[name]
        cell = spec.cells()[0]
        assert resources.job_kind(spec) == "dense"
        n = dict(spec.size_hint)["n"]
        held, cached = resources.memory_parts(spec, [cell])
        # the n x 784 float64 rows, IOME's work array padded to 1024 columns, the cache's copies
        assert held >= resources.JOB_BASE_MB * resources.MIB + 1.5 * 8 * n * 784 + 8 * n * 1024
        assert cached == (5 if n < MIN_STACK_ROW else 2) * 8 * n * 784
        assert spec.work(cell) == 2 * 3 * n * 784
    binary = load_experiments({"seed": 1, "datasets": {"pos": {"expect": {"n": 30, "d": 45}}}, "experiments": {
        "pos": {"data": {"source": "real_dataset", "dataset": "pos"}, "grid": {"rho": [0.5]}, "trials": 1,
                "metric": "l1_half", "mechanisms": ["plan_binary"]}}})
    assert resources.job_kind(binary["pos"]) == "sparse" and binary["pos"].dataset == "pos"


def test_without_expected_counts_an_mnist_job_is_sized_by_the_split_or_the_whole_set():
    def hint(expect, data):
        config = config_with({"e": experiment(data=data)}, {"mnist": {"sources": [{"path": "x"}], "expect": expect}})
        return dict(load_experiments(config)["e"].size_hint)

    assert hint({"n": 70000, "d": 784, "n_train": 60000}, {"digit": 1}) == {"d": 784, "n": 60000}
    assert hint({"n": 70000, "d": 784}, {"digit": 1}) == {"d": 784, "n": 70000}
    assert hint({"n": 70000, "d": 784, "label_counts": [7] * 10}, {"digit": 1, "split": "test"}) == {"d": 784, "n": 7}
    # a digit's training images are at most its images in both splits: that bound, not the split's size
    assert hint({"n": 70000, "d": 784, "n_train": 60000, "label_counts": [7] * 10}, {"digit": 1}) == {"d": 784, "n": 7}
    assert hint(None, {"digit": 1}) == {}


def test_the_default_config_sizes_the_iome_mnist_jobs_by_the_largest_digit_not_the_training_set():
    specs = load_experiments(load_config(default=str(ROOT / "config/config.yaml")))
    assert dict(specs["iome_mnist"].size_hint) == {"d": 784, "n": 7877}  # digit 1, both splits
    assert dict(specs["iome_mnist_mvcrec"].size_hint) == {"d": 784, "n": 7877}


@pytest.mark.parametrize(("entry", "datasets", "message"), [
    (experiment(), {}, "experiments\\.e\\.data\\.dataset: 'mnist' is not configured under datasets"),
    (experiment(data={"dataset": "pos"}), {"pos": {}},
     "experiments\\.e\\.data\\.dataset: data source 'mnist' reads the images datasets \\(\\['mnist'\\]\\), not 'pos'"),
    (experiment("real_dataset", data={"dataset": "mnist"}), {"mnist": {}},
     "data source 'real_dataset' reads the binary datasets \\(\\['kosarak', 'pos'\\]\\), not 'mnist'"),
    (experiment(grid={"dataset": ["mnist"]}), {"mnist": {}}, "experiments\\.e\\.grid\\.dataset: a real dataset is"
                                                             " fixed per experiment"),
    (experiment(data={"colour": 1}), {"mnist": {}}, "experiments\\.e\\.data\\.colour: not a parameter of data source"
                                                    " 'mnist'"),
])
def test_an_experiment_on_mnist_must_name_one_configured_image_dataset(entry, datasets, message):
    with pytest.raises(ConfigError, match=message):
        load_experiments(config_with({"e": entry}, datasets))


def test_the_scorecard_compares_an_mnist_experiment_by_its_datasets_expected_size():
    config = {"experiments": {"figure7": {"data": {"source": "mnist", "digit": 0}, "trials": 100}},
              "datasets": {"mnist": {"expect": {"n": 70000, "d": 784}}},
              "scorecard": {"experiments": {"figure7": {"paper": {"d": 784, "n": 70000}, "trials": 100}}}}
    assert scorecard.comparable(config, "figure7") is None
    config["datasets"]["mnist"]["expect"]["n"] = 18
    assert scorecard.comparable(config, "figure7") == "figure7: n = 18 here, 70000 in the paper"


# --------------------------------------------------------------------------------------------
# the workflow's plan: statuses, the parse step's inputs, Figure 2


def plan_config():
    config = config_with({"imgs": experiment(data={"digit": 0})})
    config["experiments"]["bin"] = {"data": {"source": "real_dataset", "dataset": "pos"}, "grid": {"rho": [0.5]},
                                    "trials": 1, "metric": "l1_half", "mechanisms": ["plan_binary"]}
    config["datasets"]["pos"] = {"sources": [{"path": "tests/data/BMS-POS_tiny.csv"}], "expect": {"n": 30}}
    config["figures"] = {"digits": {"title": "MNIST", "panels": [{"experiment": "imgs", "x": "rho",
                                                                   "measure": "error_vs_empirical"}]}}
    return config


def plan_with(tmp_path, statuses):
    paths = {}
    plan = RunPlan(plan_config())
    for dataset, status in statuses.items():
        paths[dataset] = tmp_path / f"{dataset}.status.json"
        paths[dataset].write_text(json.dumps({"dataset": dataset, "settings": plan.dataset_settings[dataset],
                                              **status}))
    return RunPlan(plan_config(), status_file=paths.__getitem__)


FOUND_IDX = {"available": True, "raw": "datasets/raw/mnist-idx", "source": {"url": "https://x/", "format": "idx"}}
FOUND_NPZ = {"available": True, "raw": "datasets/raw/mnist.npz", "source": {"url": "https://x.npz",
                                                                              "format": "keras_npz"}}
MISSING = {"available": False, "tried": [{"url": "https://x/", "format": "idx", "reason": "offline"}],
           "reason": "offline", "how_to_supply": "put the files in datasets/raw/mnist-idx/", "message": "offline"}


def test_the_parse_step_reads_each_of_the_four_idx_files_so_that_a_changed_one_reparses(tmp_path):
    plan = plan_with(tmp_path, {"mnist": FOUND_IDX, "pos": {"available": True, "raw": "p.csv",
                                                            "source": {"path": "p.csv", "format": "bms_pos_csv"}}})
    assert plan.real_data.raw_dataset_file("mnist") == [f"datasets/raw/mnist-idx/{name}" for name in MNIST_IDX_FILES]
    assert plan.real_data.raw_dataset_file("pos") == "p.csv"
    assert plan_with(tmp_path, {"mnist": FOUND_NPZ}).real_data.raw_dataset_file("mnist") == "datasets/raw/mnist.npz"
    assert plan.trials.dataset_inputs("imgs") == ["datasets/processed/mnist.npz"]
    # every dataset the run obtains is parsed and verified, read by an experiment or not
    assert plan.real_data.processed_dataset("mnist") == ["datasets/processed/mnist.npz"]
    assert plan_with(tmp_path, {"mnist": MISSING}).real_data.processed_dataset("mnist") == []


def test_without_mnist_its_experiments_are_left_out_and_named_but_figure2_draws_the_binary_datasets(tmp_path, capsys):
    plan = plan_with(tmp_path, {"mnist": MISSING, "pos": {"available": True, "raw": "p.csv",
                                                          "source": {"path": "p.csv", "format": "bms_pos_csv"}}})
    assert plan.real_data.figure2_datasets == ["pos"]
    assert plan.real_data.figure2_inputs() == ["datasets/processed/pos.npz"]
    assert plan.real_data.dataset_figures == {"mnist": ["digits"], "pos": ["figure2"]}
    assert plan.real_data.dataset_experiments == {"mnist": ["imgs"], "pos": ["bin"]}
    assert plan.targets.dataset_targets("mnist") == []
    targets = plan.targets.dataset_targets("pos")
    assert "figures/figure2.png" in targets and "results/bin/summary.csv" in targets
    assert "results/imgs/summary.csv" not in targets and "figures/digits.png" not in targets
    assert not plan.real_data.reproducible("imgs") and plan.real_data.reproducible_figures() == ["figure2"]
    with pytest.raises(SystemExit):
        plan.real_data.finish_datasets(__import__("sys").stderr)
    printed = capsys.readouterr().err
    assert "NOT REPRODUCED: 1 dataset(s)" in printed and "- mnist (MNIST: 70,000 handwritten digits" in printed
    assert "tried https://x/ [idx]: offline" in printed and "left out: imgs, digits" in printed


# --------------------------------------------------------------------------------------------
# trials through the engine


def test_trials_on_the_standin_and_on_mnist_measure_the_error_against_the_subsets_own_mean(processed, monkeypatch):
    specs = load_experiments(config_with({"standin": experiment("mnist_shaped", data={"digit": 2}),
                                          "real": experiment(data={"digit": 0, "processed_dir": str(processed)})}))
    for name in ("standin", "real"):
        spec = specs[name]
        frame = run_one_cell(spec, spec.cells()[0], seed=5, log=None)
        assert len(frame) == 2 * 3
        assert frame["error"].isna().all()  # no true mean: empirical mean estimation
        assert (frame["error_vs_empirical"] >= 0).all()
        empirical = frame[frame["mechanism"] == "empirical_mean"]
        assert (empirical["error_vs_empirical"] == 0).all()
        private = frame[frame["mechanism"] != "empirical_mean"]
        assert (private["error_vs_empirical"] > 0).all()
        assert np.allclose(private["ledger_total"], 0.5)  # each private mechanism spent the cell's rho
        again = run_one_cell(spec, spec.cells()[0], seed=5, log=None)
        assert frame.drop(columns="runtime_s").equals(again.drop(columns="runtime_s"))
