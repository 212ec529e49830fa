"""Datasets: the public benchmark sets smartboost is measured on, and synthetic generators.

Named public sets (:data:`REGISTRY`, ``smartboost datasets list``) live in a local cache folder:
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
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from ._config import logger
from .datafile import DataFile, read_delimited, read_query_sizes, read_svmlight
from .errors import DataError, DatasetNotFoundError

__all__ = ["DatasetFile", "PublicDataset", "REGISTRY", "cache_dir", "fetch", "get", "load", "load_frame",
           "load_splits", "make_higgs_like", "make_ranking_like", "make_high_dim"]

_CHUNK = 1 << 20
_LIGHTGBM_EXAMPLES = "https://raw.githubusercontent.com/microsoft/LightGBM/bae0b7ba953341a32b2a9c5c5c437a1b976f576f/examples"
_XGBOOST_DEMO = "https://raw.githubusercontent.com/dmlc/xgboost/379b29f0836b9dbc313b993d8e5743bd452d4117/demo/data"
_MQ2008 = "https://raw.githubusercontent.com/meta-toolkit/meta/eab9748c3c40da28619f043c99d030e1ca66401d/data/MQ2008/Fold1"
_RANKEVAL = "https://raw.githubusercontent.com/hpclab/rankeval/c6e39e9c19db2a05a43f243a990a28989db891bc/rankeval/test/data"
_LIBSVM = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets"
_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"
_MSLR_WEB10K = "https://api.onedrive.com/v1.0/shares/s!AtsMfWUz5l8nbOIoJ6Ks0bEMp78/root/content"
_RDATASETS = "https://vincentarelbundock.github.io/Rdatasets/csv"

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


def _lightgbm(folder: str, name: str, gz: str, raw: str) -> DatasetFile:
    return DatasetFile(f"lightgbm_examples/{folder}/{name}.gz", f"{_LIGHTGBM_EXAMPLES}/{folder}/{name}", gz, raw)


_BINARY_TRAIN = _lightgbm("binary_classification", "binary.train",
                          "f83cfc97c1f1bf61a958e997957f9565a0538a66cffacdfc2f287f4f7bbc6a7f",
                          "41c42dc14f86960256bf872fc8ae6286c688b44f43b4057b29428787fc1e0444")
_BINARY_TEST = _lightgbm("binary_classification", "binary.test",
                         "d38afbdb220220b6cb9dadfb66b8e50fbef21e66ee1cec7074fe3f048c147858",
                         "d99ebec91acd99638f00c727c251c947a1d17ddfcbea27bfef6b0dc5e5fb1db3")


def _mslr_web10k(split: str, content: str) -> DatasetFile:
    return DatasetFile("MSLR-WEB10K/MSLR-WEB10K.zip", _MSLR_WEB10K,
                       "2902142ea33f18c59414f654212de5063033b707d5c3939556124b1120d3a0ba", content,
                       served="as-stored", member=f"Fold1/{split}.txt")


REGISTRY: dict[str, PublicDataset] = {d.name: d for d in (
    PublicDataset(
        "a8a", "binary", "svmlight", 123,
        DatasetFile("a8a/a8a.gz", f"{_LIBSVM}/binary/a8a",
                    "878dc2e86d4b06cd84cfe1759d90e83dbfa41eee6840b184df6daf748d491110",
                    "d08a37b3fadd4bd3c8b3fc30bdc93b54d7c0f371265c90cbfb931a7efe97cd28"),
        "LIBSVM a8a (UCI Adult), 22,696 / 9,865 rows, 123 binary features, labels -1/+1 read as 0/1",
        test=DatasetFile("a8a/a8a.t.gz", f"{_LIBSVM}/binary/a8a.t",
                         "329f4cf2cc00ff61cf0182387095dd506227165ad886d8e9e9a9fb322268ad54",
                         "fc16c3580048add99056ee4d14105c93f0af63fb8ff6a78f3d66bf5d87c13cd3")),
    PublicDataset(
        "a9a", "binary", "svmlight", 123,
        DatasetFile("a9a/a9a.gz", f"{_LIBSVM}/binary/a9a",
                    "b301f3e87350539f3ebc751d07b4691a8c66f0bf38c1d179c86bbf5e2d9623b2",
                    "f5d5ffd8d865ff41328e7ee043e4b020816914ff6843ff15b98905ddbedce906"),
        "LIBSVM a9a (UCI Adult), 32,561 / 16,281 rows, 123 binary features, labels -1/+1 read as 0/1",
        test=DatasetFile("a9a/a9a.t.gz", f"{_LIBSVM}/binary/a9a.t",
                         "92967561181c73a60149cc8221b936eb746573fda8cbf483115d673f42b26c3f",
                         "1f448a153f0320399a7e40836eb207655b0bde0f21fc941cc472193daa9f5de9")),
    PublicDataset(
        "lightgbm-binary", "binary", "tsv", 28, _BINARY_TRAIN,
        "LightGBM's binary example, 7,000 / 500 rows, 28 dense features, labels 0/1", test=_BINARY_TEST),
    PublicDataset(
        "lightgbm-regression", "regression", "tsv", 28,
        _lightgbm("regression", "regression.train", _BINARY_TRAIN.sha256, _BINARY_TRAIN.sha256_content),
        "LightGBM's regression example, 7,000 / 500 rows, 28 dense features (the same file as the binary "
        "example: targets are 0/1)",
        test=_lightgbm("regression", "regression.test", _BINARY_TEST.sha256, _BINARY_TEST.sha256_content)),
    PublicDataset(
        "lightgbm-multiclass", "multiclass", "tsv", 28,
        _lightgbm("multiclass_classification", "multiclass.train",
                  "e8b14b9ebe27dd7b25f198350eb3245c4913fbc2496d06f2549497e432b209dc",
                  "3e1e22343b5e8693a67b08767e7ed2503ef9fe7574422e380015bde389a2a4d3"),
        "LightGBM's multiclass example, 7,000 / 500 rows, 28 dense features, classes 0-4",
        test=_lightgbm("multiclass_classification", "multiclass.test",
                       "a7d1a1c88b4dc168bc3ade8b3d2431f97152e6f51ebdd12e8a4cf8a6c4e314f5",
                       "bf807a208c568046f00e8e4811ceb58d67da18f6effa65300b0b075489e7fc75")),
    PublicDataset(
        "lightgbm-rank", "ranking", "svmlight", 300,
        DatasetFile("lightgbm_examples/lambdarank/rank.train.gz", f"{_LIGHTGBM_EXAMPLES}/lambdarank/rank.train",
                    "fb86079ed73ce9c88dfe63782edaceebaa6445fc0f0f123b06578e74db436736",
                    "a0c7201c89120879c14a5059e091f441cbf2a29b8aaef363885ccb1a530448df",
                    query=_lightgbm("lambdarank", "rank.train.query",
                                    "eecf09973bd4b7b4ca44d3bce91265dfcdf803f6f4cb6d910a4f1e066b8b05b8",
                                    "40cb5fef637229311cd30fab13cb7fb633b023e86a87ff04ec55db420143d6af")),
        "LightGBM's lambdarank example, 3,005 / 768 rows in 201 / 50 queries (.query side files), "
        "300 sparse features, grades 0-4",
        test=DatasetFile("lightgbm_examples/lambdarank/rank.test.gz", f"{_LIGHTGBM_EXAMPLES}/lambdarank/rank.test",
                         "2debc1b573146a838d05664d21a4b1cbbda8953500d3088cdc3e11c015854841",
                         "3b1219ce117a0a36d2f76c02de7e7831c1d79af0d40f5195c03178bbe26c824b",
                         query=_lightgbm("lambdarank", "rank.test.query",
                                         "03f6d582f1b7a24768b0b6f612355df7320acf6cccc37fb4c0af4f3e41f2e1b8",
                                         "36dca82ba3bf99201bac3987b00a8fbf6fe5f563e9fa6d0da90e783710a32df4"))),
    PublicDataset(
        "agaricus", "binary", "svmlight", 126,
        DatasetFile("xgboost_agaricus/agaricus.txt.train.gz", f"{_XGBOOST_DEMO}/agaricus.txt.train",
                    "43be55ee778cfab4045cf728236136253a5b731025c07513b16e297736469eb8",
                    "915c2def06e9b44a306ad097fe8b6652c7c477d9c1e605bd2130ad20a70a8ad6"),
        "XGBoost's agaricus demo (UCI Mushroom, one-hot), 6,513 / 1,611 rows, 126 binary features, labels 0/1",
        test=DatasetFile("xgboost_agaricus/agaricus.txt.test.gz", f"{_XGBOOST_DEMO}/agaricus.txt.test",
                         "97eec801e8862bfa8c44a0e754674e9600bfbef810a696cc4edb513e6b805702",
                         "765db79391141953d890ce197fe828a621d6487fbba4de5e4d2217bd140371c0")),
    PublicDataset(
        "colon-cancer", "binary", "svmlight", 2000,
        DatasetFile("colon_cancer/colon-cancer.gz", f"{_LIBSVM}/binary/colon-cancer.bz2",
                    "c550156016f6f42f8df6e7fb9236ec6f601365bc3e756bc7056715d021ad6b39",
                    "2377df463eaa2156acc4038a90cc8a6472e38b3445143570a8bb749c2248b7cc", served="bz2"),
        "LIBSVM colon-cancer (Alon et al. 1999), 62 rows x 2,000 dense features, labels -1/+1 read as 0/1, "
        "no test split. The checksums are those of the project's copy, rebuilt from a dense-text copy; "
        "LIBSVM's own file was never compared with it, so a download may fail the check"),
    PublicDataset(
        "mq2008", "ranking", "svmlight", 46,
        DatasetFile("mq2008/Fold1/train.txt.gz", f"{_MQ2008}/train.txt",
                    "2727418103568610416237a96f74669c3352c9e373e8f601d60b6efdbfd508b8",
                    "9b98c14e9536f2a18c59670714c99defc63e74359c56cba219a61db248f27123"),
        "LETOR 4.0 MQ2008 Fold1, 9,630 / 2,707 / 2,874 rows in 471 / 157 / 156 queries (qid: fields), "
        "46 features, grades 0-2",
        valid=DatasetFile("mq2008/Fold1/vali.txt.gz", f"{_MQ2008}/vali.txt",
                          "c7bc4ddf6645c84232b5e7055ef00678fc6fbbd7946e6a166aa483af76868085",
                          "a239850bc6fe960ad08c2b7b0d99db90fe976dd93a15358e98036591b4e7a2ac"),
        test=DatasetFile("mq2008/Fold1/test.txt.gz", f"{_MQ2008}/test.txt",
                         "1b76af5009fc175033f6490bd1b8d116e14168bf5bc7d4b20e0aad86e23b5381",
                         "c68c52feb1ecae7f17b64c8e2fda2098302681bbd4ea5fad8c73a1d32a1cf2b2")),
    PublicDataset(
        "mslr-5k", "ranking", "svmlight", 136,
        DatasetFile("mslr_fold1_5k/train.txt.gz", f"{_RANKEVAL}/msn1.fold1.train.5k.txt",
                    "1076088a88b72917280ee3a3488fcdf2ae7283f5cfaeaea6e8c5af9f61bd3b3a",
                    "6d1721de961a35fbaef7085dc5b41e2940f0ddb04bab5f7a8566cf7db4158fa6"),
        "The first 5,000 rows of MSLR-WEB Fold1 train and test (rankeval's msn1 slices), 43 / 43 queries "
        "(qid: fields; the last one of each probably cut short), 136 features, grades 0-4",
        test=DatasetFile("mslr_fold1_5k/test.txt.gz", f"{_RANKEVAL}/msn1.fold1.test.5k.txt",
                         "e44487c3868560ad20cf6dd37a7aa7218f8e50f0c28b22d738bbac59e18019d2",
                         "13d3c638edd23e482c38f4316c2680c938c2eaedbe096970ab30a48e364463d3")),
    PublicDataset(
        "higgs", "binary", "csv", 28,
        DatasetFile("HIGGS/HIGGS.csv.gz", f"{_UCI}/00280/HIGGS.csv.gz",
                    "ea302c18164d4e3d916a1e2e83a9a8d07069fa6ebc7771e4c0540d54e593b698", served="as-stored"),
        "UCI HIGGS, 11,000,000 rows (the last 500,000 are the test set, as the UCI page prescribes), "
        "28 dense features, labels 0/1; 2.8 GB compressed",
        checksums="published: sha256 of HIGGS.csv.gz from Ludwig's dataset registry "
                  "(ludwig/datasets/configs/higgs.yaml); not verified here",
        test_rows=500_000),
    PublicDataset(
        "year-prediction-msd", "regression", "csv", 90,
        DatasetFile("YearPredictionMSD/YearPredictionMSD.txt.zip", f"{_UCI}/00203/YearPredictionMSD.txt.zip",
                    None, served="as-stored", member="YearPredictionMSD.txt"),
        "UCI YearPredictionMSD, 515,345 rows (the last 51,630 are the test set, as the UCI page prescribes), "
        "90 dense features, target: the release year",
        checksums="none known: the file could not be downloaded where the registry was written and no published "
                  "checksum was found; downloads and cached files are NOT verified",
        test_rows=51_630),
    PublicDataset(
        "covtype", "multiclass", "csv", 54,
        DatasetFile("covtype/covtype.data.gz", "https://ndownloader.figshare.com/files/5976039",
                    "614360d0257557dd1792834a85a1cdebfadc3c4f30b011d56afee7ffb5b15771", served="as-stored"),
        "UCI Covertype (scikit-learn's mirror of covtype.data.gz), 581,012 rows, 54 features, classes 1-7 "
        "read as 0-6, no test split",
        checksums="published: sha256 of covtype.data.gz from scikit-learn (sklearn/datasets/_covtype.py); "
                  "not verified here",
        label_column=-1, first_class=1),
    PublicDataset(
        "mslr-web10k", "ranking", "svmlight", 136,
        _mslr_web10k("train", "6eb3fae4e1186e1242a6520f53a98abdbcde5b926dd19a28e51239284b1d55dc"),
        "Microsoft MSLR-WEB10K Fold1 train / vali / test (qid: fields), 136 features, grades 0-4; "
        "one 1.2 GB zip archive of the five folds",
        checksums="published: sha256 of MSLR-WEB10K.zip and of its Fold1 files from pytorchltr's MSLR10K "
                  "dataset class; not verified here",
        valid=_mslr_web10k("vali", "e86fb3fe7e8a5f16479da7ce04f783ae85735f17f66016786c3ffc797dd9d4db"),
        test=_mslr_web10k("test", "33fe002374a4fce58c4e12863e4eee74745d5672a26f3e4ddacc20ccfe7d6ba0")),
    PublicDataset(
        "nycflights13", "binary", "csv", 18,
        DatasetFile("nycflights13/flights.csv.gz", f"{_RDATASETS}/nycflights13/flights.csv",
                    "58413a3ee5cc3eb2a8a8cc3fc32930952fab6bc5c47c29da94e0bf13ca3ead78",
                    "c1f3d375e54c83bce60ae7be75e7c60a9a792ff9196d193f324bf5193d89b448"),
        "nycflights13: the 336,776 flights that left New York City in 2013 (US Bureau of Transportation "
        "Statistics, CC0), 19 columns with a header; categorical carrier (16), tailnum (about 4,000), origin (3), "
        "dest (105); usual tasks: arr_delay > 15 (binary) or arr_delay from the schedule and the categories. Read "
        "it with load_frame",
        checksums=f"{_VERIFIED}. The address (Rdatasets) serves the table with a row-name column first, so a "
                  "download fails the check: put the project's copy in the cache",
        categorical=("carrier", "tailnum", "origin", "dest")),
    PublicDataset(
        "ggplot2_diamonds", "regression", "csv", 9,
        DatasetFile("ggplot2_diamonds/diamonds.csv.gz", f"{_RDATASETS}/ggplot2/diamonds.csv",
                    "9a5a3b732836bf283afb1e1e914be4358bcd67a60357f6ef444e13e64fb0989b",
                    "0e7164799468299f8dc09b006cf396c43717c3dc71f947f0a32cc6e199895b46"),
        "ggplot2's diamonds: 53,940 diamonds, 10 columns with a header; categorical cut (5), color (7), clarity "
        "(8); usual task: price or log price. Read it with load_frame",
        checksums=f"{_VERIFIED}. The address (Rdatasets) serves the table with a row-name column first, so a "
                  "download fails the check: put the project's copy in the cache",
        categorical=("cut", "color", "clarity")),
)}


def cache_dir() -> Path:
    """The dataset cache folder: ``$SMARTBOOST_DATA`` or ``~/.cache/smartboost``."""
    return Path(os.environ.get("SMARTBOOST_DATA") or Path.home() / ".cache" / "smartboost")


def get(name: str) -> PublicDataset:
    """The registry entry ``name``; a :class:`DatasetNotFoundError` lists the known names."""
    if name not in REGISTRY:
        raise DatasetNotFoundError(f"unknown dataset {name!r}; known: {', '.join(REGISTRY)}")
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
