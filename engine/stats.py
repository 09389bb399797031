"""The interval every yardstick here reports: 1.96 standard errors of a mean (95%, normal)."""

from __future__ import annotations

import math

import numpy as np


def ci95(values: np.ndarray, single: float = math.nan) -> float:
    """Half-width of the 95% interval of the mean of `values`; `single` for fewer than two."""
    values = np.asarray(values, dtype=np.float64)
    if len(values) < 2:
        return single
    return 1.96 * float(np.std(values, ddof=1)) / math.sqrt(len(values))
