"""Datasets: the public benchmark sets smartboost is measured on, and synthetic generators.

Named public sets (:data:`REGISTRY`, ``smartboost datasets list``; their names, files, addresses
and checksums are data, in ``datasets.toml`` beside this module) live in a local cache folder:
``$SMARTBOOST_DATA`` if set, else ``~/.cache/smartboost``. Each file has a public address and a
path in the cache:

- a file the address serves uncompressed (LIBSVM, GitHub) is stored gzip-compressed
  (``<cache>/<folder>/<file>.gz``); one served bz2-compressed is recompressed the same way;
- a file served compressed or archived (``HIGGS.csv.gz``, ``MSLR-WEB10K.zip``) is stored as
  served, and read through gzip or from its zip member.

A file missing from the cache is downloaded (written to a ``.part`` file, then renamed), unless
``download=False``; when neither works the error names the address and the cache path, so the
file can be put there by hand. Files are checked against their sha256 when downloaded and when
read. Where the registry knows no checksum (a set too large to download where the registry was
written, with no published checksum), nothing is checked, ``datasets info`` says so, and loading
logs a warning: :attr:`PublicDataset.checksums` says for every set where its checksums come
from.

Sets with categorical columns (``PublicDataset.categorical``) are read as a pandas DataFrame by
:func:`load_frame`, those columns as categories.

The synthetic generators need no download; the README's demo and the benchmarks use them.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import os
import shutil
import tomllib
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import IO, Any

import numpy as np

from ._config import logger
from .datafile import DataFile, read_delimited, read_query_sizes, read_svmlight
from .errors import DataError, DatasetNotFoundError, did_you_mean

__all__ = ["DatasetFile", "PublicDataset", "REGISTRY", "cache_dir", "fetch", "get", "load", "load_frame",
           "load_splits", "INSURANCE_FEATURES", "make_higgs_like", "make_insurance_like", "make_ranking_like",
           "make_high_dim"]

_CHUNK = 1 << 20
_VERIFIED = "verified: sha256 of the project's copies (the shared data folder's SHA256SUMS, also checked by a test)"


@dataclass(frozen=True)
class DatasetFile:
    """One file of a public dataset.

    Attributes
    ----------
    path : str
        Path in the cache folder. ``.gz`` files are read through gzip, ``.zip`` files through
        their ``member``.
    url : str
        Public address.
    sha256 : str or None
        sha256 of the file as stored in the cache (None: not known).
    sha256_content : str or None
        sha256 of the uncompressed content (of ``member`` for a zip archive; None: not known).
    served : {'plain', 'bz2', 'as-stored'}
        What the address serves: the uncompressed content (gzip-compressed into the cache),
        bz2-compressed content (recompressed with gzip), or exactly the bytes the cache stores.
    member : str or None
        The file inside a zip archive.
    query : DatasetFile or None
        A LightGBM-style side file of query sizes (one per line) for a ranking file without
        ``qid:`` fields.
    """

    path: str
    url: str
    sha256: str | None
    sha256_content: str | None = None
    served: str = "plain"
    member: str | None = None
    query: DatasetFile | None = None

    def __post_init__(self) -> None:
        if self.served not in ("plain", "bz2", "as-stored"):
            raise ValueError(f"served must be 'plain', 'bz2' or 'as-stored', got {self.served!r}")
        if (self.path.endswith(".zip")) != (self.member is not None):
            raise ValueError(f"{self.path}: a zip archive needs a member, and only a zip archive has one")
        if self.served != "as-stored" and not self.path.endswith(".gz"):
            raise ValueError(f"{self.path}: a file recompressed into the cache must be stored as .gz")

    @property
    def verifiable(self) -> bool:
        """Whether a checksum is known for this file (and its query side file)."""
        own = self.sha256 is not None or self.sha256_content is not None
        return own and (self.query is None or self.query.verifiable)


@dataclass(frozen=True)
class PublicDataset:
    """A named public dataset: its files, format, task and splits.

    Attributes
    ----------
    name : str
    task : {'binary', 'regression', 'multiclass', 'ranking'}
    format : {'svmlight', 'csv', 'tsv'}
        svmlight files may carry LETOR ``qid:`` fields.
    n_features : int
    train : DatasetFile
    valid, test : DatasetFile or None
        Separate validation and test files, when the set has them.
    test_rows : int or None
        The test split is the last ``test_rows`` rows of the train file (HIGGS, YearPredictionMSD:
        the split their publishers prescribe).
    label_column : int
        CSV/TSV: the label column (negative counts from the end).
    first_class : int
        Multiclass: the smallest class label in the files, subtracted so that classes are 0..K-1.
    categorical : tuple of str
        CSV sets with a header and text columns: the categorical columns, read as categories by
        :func:`load_frame` (such sets have no fixed label: their description gives the usual tasks).
    checksums : str
        Where the checksums come from, or that there are none.
    description : str
    """

    name: str
    task: str
    format: str
    n_features: int
    train: DatasetFile
    description: str
    checksums: str = _VERIFIED
    valid: DatasetFile | None = None
    test: DatasetFile | None = None
    test_rows: int | None = None
    label_column: int = 0
    first_class: int = 0
    categorical: tuple[str, ...] = ()

    @property
    def files(self) -> list[DatasetFile]:
        """Every file of the set, query side files included, each cache path once."""
        out: dict[str, DatasetFile] = {}
        for file in (self.train, self.valid, self.test):
            for f in (file, file.query if file else None):
                if f is not None:
                    out.setdefault(f.path if f.member is None else f"{f.path}:{f.member}", f)
        return list(out.values())

    @property
    def splits(self) -> list[str]:
        """Names of the splits :func:`load_splits` returns."""
        return ["train"] + (["valid"] if self.valid else []) + (["test"] if self.test or self.test_rows else [])


def _dataset_file(fields: dict[str, Any]) -> DatasetFile:
    """A file's table of ``datasets.toml`` (``sha256`` left out: not known)."""
    fields = {"sha256": None, **fields}
    if "query" in fields:
        fields["query"] = _dataset_file(fields["query"])
    return DatasetFile(**fields)


def _read_registry() -> dict[str, PublicDataset]:
    """The entries of ``datasets.toml``, in its order (a field left out takes the class's default)."""
    with resources.files(__package__).joinpath("datasets.toml").open("rb") as f:
        entries = tomllib.load(f)
    splits = ("train", "valid", "test")
    return {name: PublicDataset(name=name, **{key: _dataset_file(value) if key in splits
                                              else tuple(value) if key == "categorical" else value
                                              for key, value in fields.items()})
            for name, fields in entries.items()}


REGISTRY: dict[str, PublicDataset] = _read_registry()
"""The named public datasets, read from ``datasets.toml`` when this module is imported."""


def cache_dir() -> Path:
    """The dataset cache folder: ``$SMARTBOOST_DATA`` or ``~/.cache/smartboost``.

    Raises
    ------
    DatasetNotFoundError
        ``$SMARTBOOST_DATA`` names something that is not a folder (a file).
    """
    folder = Path(os.environ.get("SMARTBOOST_DATA") or Path.home() / ".cache" / "smartboost")
    if folder.exists() and not folder.is_dir():
        raise DatasetNotFoundError(f"the dataset cache {folder} (SMARTBOOST_DATA) is not a folder; set "
                                   "SMARTBOOST_DATA to a folder")
    return folder


def get(name: str) -> PublicDataset:
    """The registry entry ``name``; a :class:`DatasetNotFoundError` lists the known names."""
    if name not in REGISTRY:
        raise DatasetNotFoundError(f"unknown dataset {name!r}{did_you_mean(name, REGISTRY)} (known: "
                                   f"{', '.join(REGISTRY)})")
    return REGISTRY[name]


def _sha256(stream: IO[bytes]) -> str:
    digest = hashlib.sha256()
    while chunk := stream.read(_CHUNK):
        digest.update(chunk)
    return digest.hexdigest()


@contextmanager
def _open_content(path: Path, file: DatasetFile) -> Iterator[IO[bytes]]:
    """The uncompressed content of a cache file, as a stream."""
    if file.member is not None:
        try:
            archive = zipfile.ZipFile(path)
            stream = archive.open(file.member)
        except zipfile.BadZipFile:
            raise DataError(f"{path} is not a zip archive") from None
        except KeyError:
            archive.close()
            raise DataError(f"{path} has no member {file.member!r}") from None
        with archive, stream:
            yield stream
    else:
        with gzip.open(path, "rb") as stream:
            yield stream


def _matches(path: Path, file: DatasetFile) -> bool:
    """Whether a cache file matches a known checksum (True when none is known)."""
    if file.sha256 is not None:
        with open(path, "rb") as f:
            if _sha256(f) == file.sha256:
                return True
    if file.sha256_content is not None:
        try:
            with _open_content(path, file) as stream:
                return _sha256(stream) == file.sha256_content
        except (OSError, EOFError, DataError):
            return False
    return file.sha256 is None


def _download(file: DatasetFile, target: Path) -> None:
    """Download ``file.url`` into ``target`` (through a ``.part`` file), stored as the registry says."""
    part = target.with_name(target.name + ".part")
    target.parent.mkdir(parents=True, exist_ok=True)
    logger.info("downloading %s to %s", file.url, target)
    try:
        with urllib.request.urlopen(file.url, timeout=60) as response:
            if file.served == "as-stored":
                with open(part, "wb") as out:
                    shutil.copyfileobj(response, out, _CHUNK)
            else:
                source = bz2.BZ2File(response) if file.served == "bz2" else response
                with gzip.GzipFile(part, "wb", mtime=0) as out:
                    shutil.copyfileobj(source, out, _CHUNK)
    except (OSError, EOFError, ValueError) as exc:
        part.unlink(missing_ok=True)
        raise DatasetNotFoundError(f"{target} is not in the cache and downloading {file.url} failed ({exc}); "
                                   f"put the file there or set SMARTBOOST_DATA to a folder holding it") from None
    if not _matches(part, file):
        part.unlink()
        raise DatasetNotFoundError(f"the file downloaded from {file.url} does not have the expected checksum")
    part.replace(target)


def _cached(file: DatasetFile, download: bool) -> Path:
    """The checked cache path of a file, downloaded first when missing."""
    target = cache_dir() / file.path
    if not target.is_file():
        if not download:
            raise DatasetNotFoundError(f"{target} is not in the cache (public address: {file.url}); download it "
                                       f"with `smartboost datasets fetch` or put the file there")
        _download(file, target)
    elif not _matches(target, file):
        raise DatasetNotFoundError(f"{target} does not match its expected checksum; delete it to download again")
    if not file.verifiable:
        logger.warning("%s: no checksum known, the content is not verified", target)
    return target


def fetch(name: str, download: bool = True) -> list[Path]:
    """Make sure every file of a dataset is in the cache and matches its checksum.

    Parameters
    ----------
    name : str
        A key of :data:`REGISTRY`.
    download : bool
        Download files missing from the cache.

    Returns
    -------
    list of Path
        The cache paths.

    Raises
    ------
    DatasetNotFoundError
        Unknown name, or a file neither in the cache nor downloadable, or a checksum mismatch.
    """
    return [_cached(f, download) for f in get(name).files]


def _read(dataset: PublicDataset, file: DatasetFile, download: bool) -> DataFile:
    if dataset.categorical:
        raise DataError(f"{dataset.name} has categorical text columns and no fixed label: read it with "
                        f"smartboost.datasets.load_frame({dataset.name!r})")
    path = _cached(file, download)
    with _open_content(path, file) as stream:
        try:
            if dataset.format == "svmlight":
                data = read_svmlight(stream, n_features=dataset.n_features)
                if dataset.n_features <= 4096:
                    data.X = data.X.toarray()
            else:
                data = read_delimited(stream, "," if dataset.format == "csv" else "\t", dataset.label_column)
        except DataError as exc:
            raise DataError(f"{path}: {exc}") from None
    if file.query is not None:
        sizes = read_query_sizes(_cached(file.query, download))
        if sizes.sum() != data.X.shape[0]:
            raise DataError(f"{file.query.path}: query sizes sum to {sizes.sum()}, not {data.X.shape[0]} rows")
        data.qid = np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)
    if dataset.task == "binary":
        data.label = (data.label > 0).astype(np.float64)
    elif dataset.first_class:
        data.label = data.label - dataset.first_class
    return data


def _rows(data: DataFile, rows: slice) -> DataFile:
    return DataFile(data.X[rows], data.label[rows], None if data.qid is None else data.qid[rows], data.feature_names)


def load_splits(name: str, download: bool = True) -> dict[str, DataFile]:
    """Load every split of a named public dataset, query ids included.

    Parameters
    ----------
    name : str
        A key of :data:`REGISTRY`.
    download : bool
        Download files missing from the cache.

    Returns
    -------
    dict of str to DataFile
        ``"train"``, and ``"valid"`` / ``"test"`` where the set has them
        (:attr:`PublicDataset.splits`). Features are dense float64 arrays (scipy CSR above 4,096
        svmlight features), binary labels 0/1, multiclass labels 0..K-1, ``qid`` set for
        ranking sets.

    Raises
    ------
    DatasetNotFoundError
        Unknown name, a file neither in the cache nor downloadable, or a checksum mismatch.
    """
    dataset = get(name)
    out = {"train": _read(dataset, dataset.train, download)}
    if dataset.valid is not None:
        out["valid"] = _read(dataset, dataset.valid, download)
    if dataset.test is not None:
        out["test"] = _read(dataset, dataset.test, download)
    elif dataset.test_rows:
        whole = out["train"]
        cut = whole.X.shape[0] - dataset.test_rows
        out["train"], out["test"] = _rows(whole, slice(None, cut)), _rows(whole, slice(cut, None))
    return out


def load(name: str, download: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Load the train and test split of a named public dataset as arrays.

    Ranking sets need their query ids: use :func:`load_splits`.

    Parameters
    ----------
    name : str
        A key of :data:`REGISTRY` (``"a8a"``, ``"a9a"``, ``"lightgbm-binary"``, ...).
    download : bool
        Download files missing from the cache.

    Returns
    -------
    X_train, y_train, X_test, y_test
        Features and labels as :func:`load_splits` reads them; the test pair is None for sets
        without a test split.

    Raises
    ------
    DatasetNotFoundError
        Unknown name, a file neither in the cache nor downloadable, or a checksum mismatch.
    """
    splits = load_splits(name, download)
    test = splits.get("test")
    return (splits["train"].X, splits["train"].label, None if test is None else test.X,
            None if test is None else test.label)


def load_frame(name: str, download: bool = True) -> Any:
    """A set with categorical columns (``PublicDataset.categorical``) as a pandas DataFrame.

    Parameters
    ----------
    name : str
        A key of :data:`REGISTRY` whose entry has categorical columns (``nycflights13``,
        ``ggplot2_diamonds``).
    download : bool
        Download the file when it is missing from the cache.

    Returns
    -------
    pandas.DataFrame
        Every column of the file; the categorical ones as pandas categories (their categories
        sorted), the others as pandas reads them (missing values NaN).

    Raises
    ------
    DatasetNotFoundError
        Unknown name, a file neither in the cache nor downloadable, or a checksum mismatch.
    DataError
        The set has no categorical columns (read it with :func:`load_splits`).
    """
    import pandas as pd

    dataset = get(name)
    if not dataset.categorical:
        raise DataError(f"{name} has no categorical columns: read it with smartboost.datasets.load_splits({name!r})")
    path = _cached(dataset.train, download)
    with _open_content(path, dataset.train) as stream:
        frame = pd.read_csv(stream, dtype={column: "category" for column in dataset.categorical})
    return frame


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


INSURANCE_FEATURES = ("driver_age", "vehicle_age", "vehicle_power", "bonus_malus", "log_density", "region",
                      "area", "brand")
"""Columns of :func:`make_insurance_like`'s features."""


def make_insurance_like(n_samples: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A motor-insurance-like claims set (in the manner of the French MTPL data): policies with
    an exposure, a claim count and a total claim amount.

    The columns of ``X`` are :data:`INSURANCE_FEATURES`: driver age (18-90), vehicle age (0-25),
    vehicle power (4-15), bonus-malus (50-230), log population density, region (0-21), area
    (0-5) and brand (0-10) codes. A policy is insured for ``exposure`` years (0.05-1); its
    claim count is Poisson with mean ``exposure * frequency(x)``, a nonlinear annual frequency
    around 0.1 (young and old drivers, high bonus-malus, dense areas and powerful new cars claim
    more); each claim costs a gamma amount (shape 2, so a coefficient of variation of 0.71)
    with mean ``severity(x)`` around 1,500 (older vehicles and some regions cost more). The
    targets of the usual models:

    - claim frequency ``claim_count / exposure``, Poisson, weight ``exposure``;
    - claim severity ``claim_amount / claim_count`` on the policies with claims, gamma,
      weight ``claim_count``;
    - pure premium ``claim_amount / exposure``, Tweedie (a mass at 0 and a continuous part;
      power between 1 and 2), weight ``exposure``.

    Parameters
    ----------
    n_samples : int
        Policies.
    seed : int
        Seed of the generator.

    Returns
    -------
    X : ndarray of float64, shape (n_samples, 8)
    exposure : ndarray of float64, shape (n_samples,)
    claim_count : ndarray of float64, shape (n_samples,)
    claim_amount : ndarray of float64, shape (n_samples,)
        The sum of the policy's claims (0 without claims).
    """
    rng = np.random.default_rng(seed)
    n = n_samples
    driver_age = np.clip(rng.normal(45.0, 14.0, n), 18.0, 90.0).round()
    vehicle_age = np.minimum(rng.exponential(6.0, n), 25.0).round()
    vehicle_power = rng.integers(4, 16, n).astype(np.float64)
    bonus_malus = np.clip(50.0 + rng.exponential(12.0, n) * (1.0 + (driver_age < 26)), 50.0, 230.0).round()
    log_density = rng.normal(6.0, 2.0, n)
    region = rng.integers(0, 22, n).astype(np.float64)
    area = np.clip(np.floor((log_density - 2.0) / 1.6), 0.0, 5.0)
    brand = rng.integers(0, 11, n).astype(np.float64)
    X = np.column_stack([driver_age, vehicle_age, vehicle_power, bonus_malus, log_density, region, area, brand])
    log_frequency = (np.log(0.1) + 0.9 * np.exp(-(driver_age - 18.0) / 6.0) + 0.004 * np.maximum(driver_age - 70.0, 0)
                     + 0.012 * (bonus_malus - 50.0) + 0.08 * (log_density - 6.0) - 0.03 * vehicle_age
                     + 0.04 * (vehicle_power - 9.0) * (vehicle_age < 4) + 0.15 * np.sin(region))
    log_severity = (np.log(1500.0) + 0.03 * vehicle_age + 0.25 * np.cos(1.7 * region) + 0.1 * (brand % 3)
                    - 0.2 * (driver_age > 60))
    exposure = rng.uniform(0.05, 1.0, n)
    claim_count = rng.poisson(exposure * np.exp(log_frequency)).astype(np.float64)
    shape = 2.0
    claim_amount = np.where(claim_count > 0, rng.gamma(np.maximum(shape * claim_count, 1e-12),
                                                        np.exp(log_severity) / shape), 0.0)
    return X, exposure, claim_count, claim_amount


def make_ranking_like(n_queries: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An MSLR-like ranking problem: queries of 20-200 documents, 136 features, grades 0-4.

    The grade is a noisy nonlinear function of the first five features plus a per-query effect,
    floored and clipped to 0-4.

    Parameters
    ----------
    n_queries : int
    seed : int
        Seed of the generator.

    Returns
    -------
    X : ndarray of float32, shape (n_rows, 136)
    y : ndarray of float64, shape (n_rows,)
        Grades 0-4.
    qid : ndarray of int64, shape (n_rows,)
        Query ids 0..n_queries-1, each query's rows contiguous.
    """
    rng = np.random.default_rng(seed)
    sizes = rng.integers(20, 201, n_queries)
    n = int(sizes.sum())
    X = rng.standard_normal((n, 136)).astype(np.float32)
    query_effect = np.repeat(rng.standard_normal(n_queries) * 0.5, sizes)
    signal = (X[:, 0] + np.sin(2 * X[:, 1]) + X[:, 2] * X[:, 3] + 0.5 * np.abs(X[:, 4]) + query_effect
              + 0.8 * rng.standard_normal(n))
    y = np.clip(np.floor(signal + 1.5), 0, 4)
    return X, y, np.repeat(np.arange(n_queries, dtype=np.int64), sizes)


def make_high_dim(n_samples: int = 700, n_features: int = 2000, n_informative: int = 10,
                  seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A p >> n binary problem like colon-cancer: Gaussian features, a linear signal in a few.

    Parameters
    ----------
    n_samples, n_features : int
    n_informative : int
        The label is the sign of a random linear function of the first ``n_informative``
        features plus Gaussian noise (standard deviation 0.5).
    seed : int
        Seed of the generator.

    Returns
    -------
    X : ndarray of float64, shape (n_samples, n_features)
    y : ndarray of float64, shape (n_samples,)
        Labels 0/1.
    """
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n_features))
    margin = X[:, :n_informative] @ rng.standard_normal(n_informative)
    y = (margin + 0.5 * rng.standard_normal(n_samples) > 0).astype(np.float64)
    return X, y
