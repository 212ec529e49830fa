"""Binary logistic loss, labels in {0, 1}: l = log(1 + e^(sF)) - y s F (docs/concepts/boosting.md, "Losses and links").

``s`` is the ``sigmoid`` parameter (LightGBM's, default 1): the log-odds are s F, the
prediction p = sigmoid(s F), g = s (p - y), h = s^2 p (1 - p), and the start F0 is the log-odds
of the weighted label mean divided by s. ``cross_entropy`` (LightGBM's ``xentropy``) is the
same loss with s = 1 for labels anywhere in [0, 1] (probabilities, shares); as in LightGBM, it
takes no ``sigmoid``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .._kernels.exp import exp
from ..errors import DataError, ParameterError
from .base import Objective, check_label_range, register, scaled_score, weighted_mean


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def _logistic_grad_hess(label, raw, sigmoid, negative_weight, positive_weight, out_grad, out_hess):
    # vectorised: the vectorisable exp of _kernels/exp.py, and numpy's error model, whose
    # division has no zero check
    for i in prange(label.shape[0]):
        # sigmoid without a data-dependent branch: e = exp(-|x|) never overflows
        x = sigmoid * raw[i]
        e = exp(-abs(x))
        r = 1.0 / (1.0 + e)
        p = r if x >= 0.0 else e * r
        # multiplying by sigmoid = 1 and class weights 1 is exact, so the default's gradients keep
        # their bits; a label above 1/2 is positive (cross_entropy's fractional ones take weights 1)
        w = positive_weight if label[i] > 0.5 else negative_weight
        out_grad[i] = w * (sigmoid * (p - label[i]))
        out_hess[i] = w * (sigmoid * sigmoid * (p * (1.0 - p)))


def check_binary_label(label: np.ndarray, name: str, training: bool, user: str = "a binary objective") -> np.ndarray:
    """Labels must be 0/1 (or -1/+1, returned as 0/1); training labels must hold both classes.
    ``user`` names what needs them in the error (a binary metric names itself)."""
    if label.size and (label == -1.0).any() and np.isin(label, (-1.0, 1.0)).all():
        label = (label > 0).astype(np.float64)
    bad = (label != 0.0) & (label != 1.0)
    if bad.any():
        row = int(np.argmax(bad))
        raise DataError(f"{name} must be 0 or 1 (or -1 and +1) for {user}; row {row} has {label[row]}")
    if training and label.min() == label.max():
        raise DataError(f"{name} holds a single class ({label[0]:g}); a binary objective needs both classes")
    return label


def weighted_positive_share(label: np.ndarray, weight: np.ndarray | None, objective: str) -> float:
    """The weighted mean of 0/1 (or [0, 1]) labels, the share of the positive class.

    Raises
    ------
    DataError
        When the rows with positive weight hold a single class (the share is 0 or 1): the
        constant minimising a binary loss is then at infinity. The labels alone may hold both
        classes (``check_binary_label`` passes them) while the weights leave one.
    """
    p = weighted_mean(label, weight)
    if not 0.0 < p < 1.0:
        raise DataError(f"the rows with positive weight hold a single class (mean label {p:g}); objective "
                        f"'{objective}' needs both")
    return p


@register
class BinaryLogistic(Objective):
    """Logistic regression on 0/1 labels (LogitBoost's loss); predicts P(y = 1) = sigmoid(s F).

    Parameters
    ----------
    sigmoid : float
        The scale ``s > 0`` of the raw score in the log-odds (the ``sigmoid`` parameter,
        LightGBM's).
    scale_pos_weight : float
        Factor of the positive rows' gradients and hessians (the ``scale_pos_weight``
        parameter).
    is_unbalance : bool
        Weigh the rarer class's gradients and hessians by majority / minority row counts of the
        training labels (:meth:`bind`), as LightGBM's ``is_unbalance``.
    """

    name = "binary"
    task = "binary"
    aliases = ("binary:logistic", "logistic", "binary_logloss", "log_loss", "logloss")
    default_metric = "logloss"
    options = ("sigmoid", "scale_pos_weight", "is_unbalance")

    def __init__(self, sigmoid: float = 1.0, scale_pos_weight: float = 1.0, is_unbalance: bool = False) -> None:
        if not (sigmoid > 0.0 and math.isfinite(sigmoid)):
            raise ParameterError(f"sigmoid must be a finite number > 0, got {sigmoid}")
        if not (scale_pos_weight > 0.0 and math.isfinite(scale_pos_weight)):
            raise ParameterError(f"scale_pos_weight must be a finite number > 0, got {scale_pos_weight}")
        self.sigmoid = float(sigmoid)
        self.scale_pos_weight = float(scale_pos_weight)
        self.is_unbalance = bool(is_unbalance)
        # the class weights (negative, positive) of the gradients; is_unbalance's wait for bind()
        self.class_weights = (1.0, self.scale_pos_weight)
        if not math.isfinite(self.sigma_smooth):
            weighted = "" if scale_pos_weight == 1.0 else f" with scale_pos_weight={scale_pos_weight}"
            raise ParameterError(f"sigmoid={sigmoid} is too large{weighted}: the hessians w s^2 p (1 - p) would "
                                 "overflow a float")

    def check_label(self, label, name="label", training=True):
        """0/1 labels, both classes present in training data."""
        return check_binary_label(label, name, training)

    def bind(self, label, query_starts):
        """With ``is_unbalance``, the class weights from the row counts of the training labels:
        the rarer class weighs majority / minority (LightGBM's rule: the positives when the
        classes are even)."""
        if not self.is_unbalance:
            return
        positives = int(np.count_nonzero(label > 0.5))
        negatives = label.shape[0] - positives
        if positives == 0 or negatives == 0:
            return  # one class: check_binary_label or the start refuses it
        if positives > negatives:
            self.class_weights = (positives / negatives, self.scale_pos_weight)
        else:
            self.class_weights = (1.0, negatives / positives * self.scale_pos_weight)

    @property
    def sigma_smooth(self) -> float:
        """The hessian's bound: h = w s^2 p (1 - p) <= w s^2 / 4, w the larger class weight."""
        return 0.25 * self.sigmoid * self.sigmoid * max(self.class_weights)

    def init_score(self, label, weight):
        """Log-odds of the weighted mean label, divided by s."""
        p = weighted_positive_share(label, weight, self.name)
        return math.log(p / (1.0 - p)) / self.sigmoid

    def grad_hess(self, label, raw, out_grad, out_hess):
        """g = s (p - y), h = s^2 p (1 - p)."""
        _logistic_grad_hess(label, raw, self.sigmoid, *self.class_weights, out_grad, out_hess)

    def loss(self, label, raw):
        """log(1 + e^(sF)) - y s F, computed without overflow."""
        log_odds = self.metric_score(raw)
        return np.logaddexp(0.0, log_odds) - label * log_odds

    def transform(self, raw):
        """P(y = 1) = sigmoid(s F)."""
        return np.exp(-np.logaddexp(0.0, -self.metric_score(raw)))

    def metric_score(self, raw):
        """Log-odds s F."""
        return scaled_score(raw, self.sigmoid)

    def to_dict(self):
        """Name, and each option that is not at its default: the files of default models keep the
        bytes they had before the options existed, and a file without one loads its default."""
        spec = super().to_dict()
        for key, default in (("sigmoid", 1.0), ("scale_pos_weight", 1.0), ("is_unbalance", False)):
            if spec.get(key) == default:
                spec.pop(key)
        return spec


@register
class CrossEntropy(BinaryLogistic):
    """Cross-entropy of labels in [0, 1] (LightGBM's ``cross_entropy``); predicts sigmoid(F)."""

    name = "cross_entropy"
    task = "regression"
    aliases = ("xentropy",)
    default_metric = "cross_entropy"
    options = ()  # LightGBM's xentropy takes no sigmoid nor class weights: s and the weights stay 1

    def check_label(self, label, name="label", training=True):
        """Labels in [0, 1]."""
        return check_label_range(label, name, f"objective '{self.name}'", 0.0, 1.0)


@njit(cache=True, nogil=True, parallel=True)
def _lambda_grad_hess(label, raw, weight, out_grad, out_hess):
    # LightGBM's g and h rearranged in s = sigmoid(F), t = 1 - s, u = w log(1 + e^F) and
    # z = p = 1 - e^-u, each computed without overflow, so that no term overflows for large |F| or u
    for i in prange(label.shape[0]):
        f, w, y = raw[i], weight[i], label[i]
        e = math.exp(-abs(f))
        s = 1.0 / (1.0 + e) if f >= 0.0 else e / (1.0 + e)
        t = e / (1.0 + e) if f >= 0.0 else 1.0 / (1.0 + e)
        u = w * (max(f, 0.0) + math.log1p(e))
        z = -math.expm1(-u)
        ws = w * s
        out_grad[i] = ws * (1.0 - y / z)
        out_hess[i] = ws * t * (1.0 - y / z) + y * ws * ws * math.exp(-u) / (z * z)


def lambda_loss(label: np.ndarray, raw: np.ndarray, weight: np.ndarray | None) -> np.ndarray:
    """Each row's cross-entropy of ``cross_entropy_lambda``: -(1 - y) log(1 - p) - y log p with
    p = 1 - exp(-w lambda), lambda = log(1 + e^F), computed as (1 - y) w lambda - y log(-expm1(-w lambda))
    (w = 1 where ``weight`` is None)."""
    u = np.logaddexp(0.0, raw) if weight is None else weight * np.logaddexp(0.0, raw)
    with np.errstate(divide="ignore"):  # p = 0 where u underflows to 0: the term is y * inf, or 0 for y = 0
        log_p = np.log(-np.expm1(-u))
    return (1.0 - label) * u - np.where(label > 0.0, label * log_p, 0.0)


@register
class CrossEntropyLambda(Objective):
    """LightGBM's ``cross_entropy_lambda``: labels in [0, 1] modelled as p = 1 - exp(-w lambda), with
    the intensity lambda = log(1 + e^F) and w the row's weight; predicts lambda.

    The weight is a parameter of each row's loss (an exposure), not a factor of it: the training
    run gives the rows' weights to :meth:`bind_weight` and grows the trees on the gradients as they
    are. Without weights the loss is ``cross_entropy``'s (p = sigmoid(F)), the prediction lambda.
    """

    name = "cross_entropy_lambda"
    task = "regression"
    aliases = ("xentlambda",)
    default_metric = "cross_entropy_lambda"
    row_wise = False  # the bound weights are every training row's: gradients of all rows at once
    weight_in_loss = True
    sigma_smooth = None  # with weights the hessian is unbounded (it grows as y / p^2 where p is small)

    def __init__(self) -> None:
        self.weight: np.ndarray | None = None

    def check_label(self, label, name="label", training=True):
        """Labels in [0, 1]."""
        return check_label_range(label, name, f"objective '{self.name}'", 0.0, 1.0)

    def bind_weight(self, weight: np.ndarray | None) -> None:
        """Remember the training rows' weights, which must be > 0 (None: all 1).

        Raises
        ------
        DataError
            Naming the first row whose weight is not positive.
        """
        if weight is not None:
            check_label_range(weight, "weight", f"objective '{self.name}'", 0.0, low_open=True)
        self.weight = weight

    def _weight_of(self, label: np.ndarray) -> np.ndarray | None:
        """The bound weights of rows ``label`` (every training row's, or None)."""
        if self.weight is not None and self.weight.shape[0] != label.shape[0]:
            raise RuntimeError(f"objective '{self.name}' holds the weights of {self.weight.shape[0]} rows, "
                               f"given {label.shape[0]}")
        return self.weight

    def init_score(self, label, weight):
        """LightGBM's start: log(e^m - 1), m the weighted mean label (the lambda of mean m)."""
        m = weighted_mean(label, weight)
        if not m > 0.0:
            raise DataError(f"every label is 0 (or has weight 0): objective '{self.name}' starts from "
                            "log(e^m - 1) of the weighted mean label m, which must be > 0")
        return math.log(math.expm1(m))

    def grad_hess(self, label, raw, out_grad, out_hess):
        """Unweighted: cross_entropy's g = p - y, h = p (1 - p); weighted: the derivatives of
        -(1 - y) log(1 - p) - y log p in F, p = 1 - exp(-w log(1 + e^F))."""
        weight = self._weight_of(label)
        if weight is None:
            _logistic_grad_hess(label, raw, 1.0, 1.0, 1.0, out_grad, out_hess)
        else:
            _lambda_grad_hess(label, raw, weight, out_grad, out_hess)

    def loss(self, label, raw):
        """:func:`lambda_loss` with the bound weights."""
        return lambda_loss(label, raw, self._weight_of(label))

    def transform(self, raw):
        """The intensity lambda = log(1 + e^F)."""
        return np.logaddexp(0.0, raw)
