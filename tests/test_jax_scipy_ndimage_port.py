"""Regressions found by running JAX 0.10.2's tests/scipy_ndimage_test.py against
functrans (driver: /work/jt30/jtscipy). Each test names the JAX test it comes from."""
from __future__ import annotations

import numpy as np
import pytest

from functrans.scipy.ndimage import map_coordinates


def test_map_coordinates_error_messages_name_what_jax_names():
    # testMapCoordinatesErrors: JAX's messages say "requires order<=1", "does not yet
    # support mode", "sequence of length" (programs match them)
    x = np.arange(5.0)
    c = [np.linspace(0, 5, num=3)]
    with pytest.raises(NotImplementedError, match="requires order<=1"):
        map_coordinates(x, c, order=2)
    with pytest.raises(NotImplementedError, match="does not yet support mode"):
        map_coordinates(x, c, order=1, mode="grid-wrap")
    with pytest.raises(ValueError, match="sequence of length"):
        map_coordinates(x, [c, c], order=1)
    np.testing.assert_allclose(map_coordinates(x, c, order=1), [0.0, 2.5, 0.0])
