"""The dataset registry: checksums against the shared copies, the shapes the data's README gives,
downloads (from file:// addresses: no network), offline use, and the errors."""

import bz2
import gzip
import hashlib
import logging
import zipfile

import numpy as np
import pytest

from smartboost import datasets
from smartboost._config import logger
from smartboost.datasets import DatasetFile, PublicDataset
from smartboost.errors import DataError, DatasetNotFoundError

# Files of the shared folder that belong to no registry entry (side data the loaders do not read).
_UNREGISTERED = {
    "lightgbm_examples/binary_classification/binary.train.weight.gz",
    "lightgbm_examples/binary_classification/binary.test.weight.gz",
    "lightgbm_examples/regression/regression.train.init.gz",
    "lightgbm_examples/regression/regression.test.init.gz",
    "xgboost_agaricus/featmap.txt.gz",
}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_registry_checksums_are_the_shared_folders(shared_data):
    sums = dict(reversed(line.split()) for line in (shared_data / "SHA256SUMS").read_text().splitlines())
    registered = set()
    for dataset in datasets.REGISTRY.values():
        if not dataset.checksums.startswith("verified"):
            assert not any(f.path in sums for f in dataset.files)
            continue
        for file in dataset.files:
            assert sums[file.path] == file.sha256, file.path
            data = (shared_data / file.path).read_bytes()
            assert _sha256(data) == file.sha256 and _sha256(gzip.decompress(data)) == file.sha256_content
            registered.add(file.path)
    assert set(sums) - registered == _UNREGISTERED


@pytest.mark.parametrize("name, shapes, queries", [
    ("mq2008", {"train": (9630, 46), "valid": (2707, 46), "test": (2874, 46)},
     {"train": 471, "valid": 157, "test": 156}),
    ("mslr-5k", {"train": (5000, 136), "test": (5000, 136)}, {"train": 43, "test": 43}),
    ("lightgbm-rank", {"train": (3005, 300), "test": (768, 300)}, {"train": 201, "test": 50}),
    ("agaricus", {"train": (6513, 126), "test": (1611, 126)}, None),
    ("colon-cancer", {"train": (62, 2000)}, None),
])
def test_shared_sets_have_the_documented_shapes(shared_data, name, shapes, queries):
    splits = datasets.load_splits(name, download=False)
    assert {k: v.X.shape for k, v in splits.items()} == shapes
    assert list(splits) == datasets.REGISTRY[name].splits
    if queries:
        assert {k: np.unique(v.qid).size for k, v in splits.items()} == queries
    else:
        assert all(v.qid is None and set(np.unique(v.label)) == {0.0, 1.0} for v in splits.values())
    if name == "colon-cancer":
        assert np.bincount(splits["train"].label.astype(int)).tolist() == [40, 22]


def _register(monkeypatch, tmp_path, **fields) -> PublicDataset:
    """A registry entry 'tiny' and an empty cache folder."""
    monkeypatch.setenv("SMARTBOOST_DATA", str(tmp_path / "cache"))
    dataset = PublicDataset(**{"name": "tiny", "task": "binary", "format": "svmlight", "n_features": 3,
                               "description": "test set", **fields})
    monkeypatch.setitem(datasets.REGISTRY, "tiny", dataset)
    return dataset


_SVMLIGHT = b"1 1:0.5 3:2\n-1 2:1.5\n1 1:3 2:1 3:1\n-1 3:0.25\n"


def test_download_then_offline_from_the_cache(tmp_path, monkeypatch):
    remote = tmp_path / "remote.svm"
    remote.write_bytes(_SVMLIGHT)
    _register(monkeypatch, tmp_path, train=DatasetFile("tiny/train.gz", remote.as_uri(), None, _sha256(_SVMLIGHT)))
    X, y, X_test, y_test = datasets.load("tiny")
    np.testing.assert_array_equal(X, [[0.5, 0, 2], [0, 1.5, 0], [3, 1, 1], [0, 0, 0.25]])
    np.testing.assert_array_equal(y, [1, 0, 1, 0])
    assert X_test is None and y_test is None
    cached = tmp_path / "cache" / "tiny" / "train.gz"
    assert gzip.decompress(cached.read_bytes()) == _SVMLIGHT
    assert not list(cached.parent.glob("*.part"))
    remote.unlink()  # offline: the cache is enough
    np.testing.assert_array_equal(datasets.load("tiny", download=False)[0], X)
    assert datasets.fetch("tiny") == [cached]


def test_unreachable_address_and_empty_cache_name_both(tmp_path, monkeypatch):
    url = (tmp_path / "nowhere" / "train.svm").as_uri()
    _register(monkeypatch, tmp_path, train=DatasetFile("tiny/train.gz", url, None, "0" * 64))
    cache_path = str(tmp_path / "cache" / "tiny" / "train.gz")
    with pytest.raises(DatasetNotFoundError) as error:
        datasets.load("tiny")
    assert url in str(error.value) and cache_path in str(error.value) and "SMARTBOOST_DATA" in str(error.value)
    with pytest.raises(DatasetNotFoundError) as error:
        datasets.load("tiny", download=False)
    assert url in str(error.value) and cache_path in str(error.value)
    assert not (tmp_path / "cache" / "tiny").exists() or not any((tmp_path / "cache" / "tiny").iterdir())


def test_a_download_with_the_wrong_checksum_is_not_kept(tmp_path, monkeypatch):
    remote = tmp_path / "remote.svm"
    remote.write_bytes(_SVMLIGHT)
    _register(monkeypatch, tmp_path, train=DatasetFile("tiny/train.gz", remote.as_uri(), None, "0" * 64))
    with pytest.raises(DatasetNotFoundError, match="expected checksum"):
        datasets.load("tiny")
    assert not any((tmp_path / "cache" / "tiny").iterdir())


def test_a_corrupt_cache_file_is_reported(tmp_path, monkeypatch):
    remote = tmp_path / "remote.svm"
    remote.write_bytes(_SVMLIGHT)
    _register(monkeypatch, tmp_path, train=DatasetFile("tiny/train.gz", remote.as_uri(), None, _sha256(_SVMLIGHT)))
    (tmp_path / "cache" / "tiny").mkdir(parents=True)
    (tmp_path / "cache" / "tiny" / "train.gz").write_bytes(gzip.compress(b"1 1:1\n"))
    with pytest.raises(DatasetNotFoundError, match="does not match its expected checksum; delete it"):
        datasets.load("tiny")


def test_zip_member_as_stored_with_a_test_tail_and_shifted_classes(tmp_path, monkeypatch):
    rows = np.array([[1, 2, 3], [4, 5, 1], [7, 8, 2], [1, 1, 3], [2, 2, 1]], float)  # last column: class 1-3
    archive = tmp_path / "remote.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("data/table.csv", "\n".join(",".join(f"{v:g}" for v in r) for r in rows) + "\n")
    _register(monkeypatch, tmp_path, task="multiclass", format="csv", n_features=2, test_rows=2, label_column=-1,
              first_class=1, train=DatasetFile("tiny/remote.zip", archive.as_uri(), _sha256(archive.read_bytes()),
                                               served="as-stored", member="data/table.csv"))
    splits = datasets.load_splits("tiny")
    np.testing.assert_array_equal(splits["train"].X, rows[:3, :2])
    np.testing.assert_array_equal(splits["test"].label, [2, 0])
    assert (tmp_path / "cache" / "tiny" / "remote.zip").read_bytes() == archive.read_bytes()


def test_bz2_address_is_recompressed_and_query_side_files_give_qid(tmp_path, monkeypatch):
    remote = tmp_path / "rank.bz2"
    remote.write_bytes(bz2.compress(b"2 1:1\n0 1:2\n1 2:1\n0 1:1\n1 3:1\n"))
    sizes = tmp_path / "rank.query"
    sizes.write_bytes(b"2\n3\n")
    query = DatasetFile("tiny/rank.query.gz", sizes.as_uri(), None, _sha256(b"2\n3\n"))
    _register(monkeypatch, tmp_path, task="ranking",
              train=DatasetFile("tiny/rank.gz", remote.as_uri(), None, _sha256(bz2.decompress(remote.read_bytes())),
                                served="bz2", query=query))
    train = datasets.load_splits("tiny")["train"]
    np.testing.assert_array_equal(train.qid, [0, 0, 1, 1, 1])
    np.testing.assert_array_equal(train.label, [2, 0, 1, 0, 1])  # ranking grades stay as they are
    assert gzip.decompress((tmp_path / "cache" / "tiny" / "rank.gz").read_bytes()).startswith(b"2 1:1\n")


def test_a_file_without_checksum_loads_with_a_warning(tmp_path, monkeypatch):
    remote = tmp_path / "remote.svm"
    remote.write_bytes(_SVMLIGHT)
    dataset = _register(monkeypatch, tmp_path, train=DatasetFile("tiny/train.gz", remote.as_uri(), None),
                        checksums="none known: test")
    assert not dataset.train.verifiable
    messages = []
    handler = logging.Handler()
    handler.emit = lambda record: messages.append(record.getMessage())
    level = logger.level  # training with verbosity=-1 elsewhere may have raised it above warnings
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    try:
        datasets.load("tiny")
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert any("no checksum known" in m for m in messages)


def test_large_sets_have_public_addresses_and_say_how_they_are_checked():
    for name in ("higgs", "year-prediction-msd", "covtype", "mslr-web10k"):
        dataset = datasets.REGISTRY[name]
        assert all(f.url.startswith("https://") for f in dataset.files)
        assert dataset.checksums.startswith(("published:", "none known:"))
        assert "not verified" in dataset.checksums.lower()
    assert not datasets.REGISTRY["year-prediction-msd"].train.verifiable
    assert datasets.REGISTRY["higgs"].splits == ["train", "test"]
    assert datasets.REGISTRY["mslr-web10k"].splits == ["train", "valid", "test"]


def test_categorical_sets_load_as_frames_with_categories(shared_data):
    flights = datasets.load_frame("nycflights13", download=False)
    assert flights.shape == (336_776, 19)
    assert {c: flights[c].cat.categories.size for c in ("carrier", "origin", "dest")} == {
        "carrier": 16, "origin": 3, "dest": 105}
    diamonds = datasets.load_frame("ggplot2_diamonds", download=False)
    assert diamonds.shape == (53_940, 10) and diamonds["clarity"].cat.categories.size == 8
    with pytest.raises(DataError, match="load_frame"):
        datasets.load_splits("nycflights13", download=False)
    with pytest.raises(DataError, match="load_splits"):
        datasets.load_frame("a9a", download=False)


def test_a_file_as_the_cache_folder_is_named(tmp_path, monkeypatch):
    (tmp_path / "data").write_text("not a folder")  # was NotADirectoryError on the dataset's folder
    monkeypatch.setenv("SMARTBOOST_DATA", str(tmp_path / "data"))
    with pytest.raises(DatasetNotFoundError, match=f"the dataset cache {tmp_path / 'data'} .SMARTBOOST_DATA. is not a"):
        datasets.load("a8a")


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(DatasetNotFoundError, match=r"unknown dataset 'nope' \(known: a8a, a9a"):
        datasets.load("nope")
    with pytest.raises(DatasetNotFoundError, match=r"unknown dataset 'a9'; did you mean 'a9a'\?"):
        datasets.load("a9")


def test_registry_entries_are_consistent():
    with pytest.raises(ValueError, match="needs a member"):
        DatasetFile("x/y.zip", "https://example.org/y.zip", None, served="as-stored")
    with pytest.raises(ValueError, match="stored as .gz"):
        DatasetFile("x/y.txt", "https://example.org/y.txt", None)


def test_experiment_data_holds_out_whole_queries_and_cuts_at_query_boundaries(tmp_path, monkeypatch):
    from smartboost.errors import DataError
    from smartboost.experiments.data import load_public

    rng = np.random.default_rng(0)
    sizes = rng.integers(2, 6, 40)
    lines = [f"{rng.integers(0, 3)} qid:{q} 1:{rng.random():.3f} 2:{rng.random():.3f}"
             for q, size in enumerate(sizes) for _ in range(size)]
    content = ("\n".join(lines) + "\n").encode()
    remote = tmp_path / "rank.svm"
    remote.write_bytes(content)
    _register(monkeypatch, tmp_path, task="ranking", n_features=2,
              train=DatasetFile("tiny/rank.gz", remote.as_uri(), None, _sha256(content)))
    data = load_public("tiny", ["ranking"], seed=3)
    assert "no test split" in data.note and data.X.dtype == np.float32
    assert len(data.y) + len(data.y_test) == sizes.sum()
    assert not set(data.qid) & set(data.qid_test)  # queries are held out whole
    assert 0.1 < np.unique(data.qid_test).size / 40 < 0.45
    first_query = int(np.sum(data.qid == data.qid[0]))
    first = load_public("tiny", ["ranking"], rows=first_query + 1, seed=3)  # one row into the second query
    assert len(first.y) == first_query and np.unique(first.qid).size == 1  # whole queries only
    assert "first" in first.note
    with pytest.raises(DataError, match="tiny is a ranking dataset; this experiment needs binary data"):
        load_public("tiny", ["binary"])
