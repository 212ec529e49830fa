"""Datasets: the public benchmark sets smartboost is measured on, and synthetic generators.

Named public sets live in a local cache folder: ``$SMARTBOOST_DATA`` if set, else
``~/.cache/smartboost``. Each set's files are stored gzip-compressed under
``<cache>/<folder>/<file>.gz`` and checked against their sha256 when loaded. A file missing
from the cache is downloaded from its public address (the original, uncompressed), checked
against the sha256 of the original content, and gzip-compressed into the cache. Offline, a
missing file is an error naming the address and the cache path.

The synthetic generators need no download; the README's demo and the benchmarks use them.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .datafile import read_delimited, read_svmlight
from .errors import DatasetNotFoundError

__all__ = ["DatasetFile", "PublicDataset", "REGISTRY", "cache_dir", "load", "make_higgs_like"]

_LIGHTGBM_EXAMPLES = "https://raw.githubusercontent.com/microsoft/LightGBM/bae0b7ba953341a32b2a9c5c5c437a1b976f576f/examples"
_LIBSVM_BINARY = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary"


@dataclass(frozen=True)
class DatasetFile:
    """One file of a public dataset.

    Attributes
    ----------
    path : str
        Path of the gzip file inside the cache folder.
    url : str
        Public address of the original (uncompressed) file.
    sha256_gz : str
        sha256 of the cached gzip file.
    sha256_raw : str
        sha256 of the original content.
    """

    path: str
    url: str
    sha256_gz: str
    sha256_raw: str


@dataclass(frozen=True)
class PublicDataset:
    """A named public dataset: its files, format and task."""

    name: str
    task: str
    format: str
    n_features: int
    train: DatasetFile
    test: DatasetFile | None
    description: str


REGISTRY: dict[str, PublicDataset] = {d.name: d for d in (
    PublicDataset(
        "a8a", "binary", "svmlight", 123,
        DatasetFile("a8a/a8a.gz", f"{_LIBSVM_BINARY}/a8a",
                    "878dc2e86d4b06cd84cfe1759d90e83dbfa41eee6840b184df6daf748d491110",
                    "d08a37b3fadd4bd3c8b3fc30bdc93b54d7c0f371265c90cbfb931a7efe97cd28"),
        DatasetFile("a8a/a8a.t.gz", f"{_LIBSVM_BINARY}/a8a.t",
                    "329f4cf2cc00ff61cf0182387095dd506227165ad886d8e9e9a9fb322268ad54",
                    "fc16c3580048add99056ee4d14105c93f0af63fb8ff6a78f3d66bf5d87c13cd3"),
        "LIBSVM a8a (UCI Adult), 22,696 / 9,865 rows, 123 binary features, labels -1/+1 read as 0/1"),
    PublicDataset(
        "a9a", "binary", "svmlight", 123,
        DatasetFile("a9a/a9a.gz", f"{_LIBSVM_BINARY}/a9a",
                    "b301f3e87350539f3ebc751d07b4691a8c66f0bf38c1d179c86bbf5e2d9623b2",
                    "f5d5ffd8d865ff41328e7ee043e4b020816914ff6843ff15b98905ddbedce906"),
        DatasetFile("a9a/a9a.t.gz", f"{_LIBSVM_BINARY}/a9a.t",
                    "92967561181c73a60149cc8221b936eb746573fda8cbf483115d673f42b26c3f",
                    "1f448a153f0320399a7e40836eb207655b0bde0f21fc941cc472193daa9f5de9"),
        "LIBSVM a9a (UCI Adult), 32,561 / 16,281 rows, 123 binary features, labels -1/+1 read as 0/1"),
    PublicDataset(
        "lightgbm-binary", "binary", "tsv", 28,
        DatasetFile("lightgbm_examples/binary_classification/binary.train.gz",
                    f"{_LIGHTGBM_EXAMPLES}/binary_classification/binary.train",
                    "f83cfc97c1f1bf61a958e997957f9565a0538a66cffacdfc2f287f4f7bbc6a7f",
                    "41c42dc14f86960256bf872fc8ae6286c688b44f43b4057b29428787fc1e0444"),
        DatasetFile("lightgbm_examples/binary_classification/binary.test.gz",
                    f"{_LIGHTGBM_EXAMPLES}/binary_classification/binary.test",
                    "d38afbdb220220b6cb9dadfb66b8e50fbef21e66ee1cec7074fe3f048c147858",
                    "d99ebec91acd99638f00c727c251c947a1d17ddfcbea27bfef6b0dc5e5fb1db3"),
        "LightGBM's binary example, 7,000 / 500 rows, 28 dense features, labels 0/1"),
    PublicDataset(
        "lightgbm-regression", "regression", "tsv", 28,
        DatasetFile("lightgbm_examples/regression/regression.train.gz",
                    f"{_LIGHTGBM_EXAMPLES}/regression/regression.train",
                    "f83cfc97c1f1bf61a958e997957f9565a0538a66cffacdfc2f287f4f7bbc6a7f",
                    "41c42dc14f86960256bf872fc8ae6286c688b44f43b4057b29428787fc1e0444"),
        DatasetFile("lightgbm_examples/regression/regression.test.gz",
                    f"{_LIGHTGBM_EXAMPLES}/regression/regression.test",
                    "d38afbdb220220b6cb9dadfb66b8e50fbef21e66ee1cec7074fe3f048c147858",
                    "d99ebec91acd99638f00c727c251c947a1d17ddfcbea27bfef6b0dc5e5fb1db3"),
        "LightGBM's regression example, 7,000 / 500 rows, 28 dense features (the same file as the binary "
        "example: targets are 0/1)"),
    PublicDataset(
        "lightgbm-multiclass", "multiclass", "tsv", 28,
        DatasetFile("lightgbm_examples/multiclass_classification/multiclass.train.gz",
                    f"{_LIGHTGBM_EXAMPLES}/multiclass_classification/multiclass.train",
                    "e8b14b9ebe27dd7b25f198350eb3245c4913fbc2496d06f2549497e432b209dc",
                    "3e1e22343b5e8693a67b08767e7ed2503ef9fe7574422e380015bde389a2a4d3"),
        DatasetFile("lightgbm_examples/multiclass_classification/multiclass.test.gz",
                    f"{_LIGHTGBM_EXAMPLES}/multiclass_classification/multiclass.test",
                    "a7d1a1c88b4dc168bc3ade8b3d2431f97152e6f51ebdd12e8a4cf8a6c4e314f5",
                    "bf807a208c568046f00e8e4811ceb58d67da18f6effa65300b0b075489e7fc75"),
        "LightGBM's multiclass example, 7,000 / 500 rows, 28 dense features, classes 0-4"),
)}


def cache_dir() -> Path:
    """The dataset cache folder: ``$SMARTBOOST_DATA`` or ``~/.cache/smartboost``."""
    return Path(os.environ.get("SMARTBOOST_DATA") or Path.home() / ".cache" / "smartboost")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _fetch(file: DatasetFile, target: Path) -> None:
    try:
        with urllib.request.urlopen(file.url, timeout=60) as response:
            raw = response.read()
    except OSError as exc:
        raise DatasetNotFoundError(f"{target} is not in the cache and downloading {file.url} failed ({exc}); "
                                   f"put the file there or set SMARTBOOST_DATA to a folder holding it") from None
    if _sha256(raw) != file.sha256_raw:
        raise DatasetNotFoundError(f"the file downloaded from {file.url} does not have the expected checksum")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".part")
    tmp.write_bytes(gzip.compress(raw, mtime=0))
    tmp.replace(target)


def file_bytes(file: DatasetFile, download: bool = True) -> bytes:
    """Uncompressed content of a dataset file, from the cache (downloaded when missing)."""
    target = cache_dir() / file.path
    if not target.exists():
        if not download:
            raise DatasetNotFoundError(f"{target} is not in the cache (public address: {file.url})")
        _fetch(file, target)
    data = target.read_bytes()
    if _sha256(data) != file.sha256_gz and _sha256(gzip.decompress(data)) != file.sha256_raw:
        raise DatasetNotFoundError(f"{target} does not match its expected checksum; delete it to download again")
    return gzip.decompress(data)


def _parse(dataset: PublicDataset, raw: bytes) -> tuple[np.ndarray, np.ndarray]:
    if dataset.format == "svmlight":
        data = read_svmlight(io.BytesIO(raw), n_features=dataset.n_features)
        X = data.X.toarray() if dataset.n_features <= 4096 else data.X
    else:
        data = read_delimited(io.BytesIO(raw), "\t", label_column=0)
        X = data.X
    y = data.label
    if dataset.task == "binary":
        y = (y > 0).astype(np.float64)
    return X, y


def load(name: str, download: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Load a named public dataset.

    Parameters
    ----------
    name : str
        A key of :data:`REGISTRY` (``"a8a"``, ``"a9a"``, ``"lightgbm-binary"``).
    download : bool
        Download files missing from the cache.

    Returns
    -------
    X_train, y_train, X_test, y_test
        Features (float64) and labels (binary labels as 0/1); the test pair is None for sets
        without a test split.

    Raises
    ------
    DatasetNotFoundError
        A file is neither in the cache nor downloadable.
    """
    if name not in REGISTRY:
        raise KeyError(f"unknown dataset {name!r}; known: {sorted(REGISTRY)}")
    dataset = REGISTRY[name]
    X_train, y_train = _parse(dataset, file_bytes(dataset.train, download))
    if dataset.test is None:
        return X_train, y_train, None, None
    X_test, y_test = _parse(dataset, file_bytes(dataset.test, download))
    return X_train, y_train, X_test, y_test


def make_higgs_like(n_samples: int, n_features: int = 28, seed: int = 0,
                    missing_rate: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """A HIGGS-like binary classification problem: dense float32 features, 0/1 labels.

    Features mix Gaussian, heavy-tailed and uniform columns; the log-odds are a sum of
    interactions, thresholds and smooth nonlinearities of the first 16 features plus noise, so
    a good boosted model reaches a test AUC around 0.8-0.85 and keeps improving with more trees.

    Parameters
    ----------
    n_samples : int
        Rows.
    n_features : int
        Columns, at least 16.
    seed : int
        Seed of the generator.
    missing_rate : float
        Fraction of feature values replaced by NaN.

    Returns
    -------
    X : ndarray of float32, shape (n_samples, n_features)
    y : ndarray of float64, shape (n_samples,)
    """
    if n_features < 16:
        raise ValueError("make_higgs_like needs at least 16 features")
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n_features), dtype=np.float32)
    X[:, 4::4] = np.exp(X[:, 4::4] * np.float32(0.6))       # heavy-tailed, positive
    X[:, 5::4] = rng.random((n_samples, len(range(5, n_features, 4))), dtype=np.float32)
    x = X.astype(np.float64)
    logit = (0.9 * x[:, 0] * x[:, 1]
             + np.sin(2.0 * x[:, 2]) * 1.2
             + np.where(x[:, 3] > 0.3, x[:, 4], -0.5 * x[:, 4])
             - 0.6 * (x[:, 6] ** 2 - 1.0)
             + 1.5 * (x[:, 5] - 0.5) * np.sign(x[:, 7])
             + 0.8 * np.tanh(x[:, 8] + x[:, 9])
             + 0.5 * np.abs(x[:, 10]) * x[:, 11]
             + 0.4 * (x[:, 12] > x[:, 13])
             + 0.3 * x[:, 14] - 0.3 * np.log(x[:, 10] ** 2 + 0.1)
             + 0.25 * x[:, 15])
    logit += 0.5 * rng.standard_normal(n_samples)
    y = (rng.random(n_samples) < 1.0 / (1.0 + np.exp(-logit))).astype(np.float64)
    if missing_rate > 0:
        X[rng.random(X.shape) < missing_rate] = np.nan
    return X, y
