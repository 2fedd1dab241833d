"""Table rows for the structural primitives (reshape, broadcast_in_dim, transpose,
squeeze, slice, rev, concatenate, pad, iota) through ``functrans.numpy`` and ``lax``."""
import numpy as np

import functrans.numpy as fnp
from functrans import lax
from tests.cases import OpCase, gen, ints, randn


def _np_pad_ref(x, pv, config):
    """Independent numpy reference for lax.pad: interior, then edges (negative crop)."""
    for ax, (lo, hi, it) in enumerate(config):
        n = x.shape[ax]
        shape = list(x.shape)
        shape[ax] = n + max(n - 1, 0) * it
        y = np.full(shape, pv, x.dtype)
        sl = [slice(None)] * x.ndim
        sl[ax] = slice(0, None, it + 1)
        y[tuple(sl)] = x
        widths = [(0, 0)] * x.ndim
        widths[ax] = (max(lo, 0), max(hi, 0))
        y = np.pad(y, widths, constant_values=pv)
        sl = [slice(None)] * x.ndim
        sl[ax] = slice(-min(lo, 0), y.shape[ax] + min(hi, 0))
        x = y[tuple(sl)]
    return x


PAD_CFG = ((1, -1, 1), (-1, 2, 0))

CASES = [
    # reshape / transpose / broadcast
    OpCase("reshape", lambda x: fnp.reshape(x, (4, -1)), gen(randn(2, 6)), lambda x: np.reshape(x, (4, 3))),
    OpCase("reshape_F", lambda x: fnp.reshape(x, (3, 4), order="F"), gen(randn(2, 6)),
           lambda x: np.reshape(x, (3, 4), order="F")),
    OpCase("reshape_scalar", lambda x: fnp.reshape(x, (1, 1)), gen(randn()), lambda x: np.reshape(x, (1, 1))),
    OpCase("reshape_empty", lambda x: fnp.reshape(x, (3, 0)), gen(randn(0, 3)), lambda x: np.reshape(x, (3, 0))),
    OpCase("ravel", fnp.ravel, gen(randn(2, 3, 2)), np.ravel),
    OpCase("method_flatten", lambda x: fnp.asarray(x).reshape(-1)[::2], gen(randn(2, 3)), lambda x: x.reshape(-1)[::2]),
    OpCase("transpose", lambda x: fnp.transpose(x), gen(randn(2, 3, 4)), np.transpose),
    OpCase("transpose_axes", lambda x: fnp.transpose(x, (1, -1, 0)), gen(randn(2, 3, 4)),
           lambda x: np.transpose(x, (1, 2, 0))),
    OpCase("swapaxes", lambda x: fnp.swapaxes(x, 0, -1), gen(randn(2, 3, 4)), lambda x: np.swapaxes(x, 0, -1)),
    OpCase("moveaxis", lambda x: fnp.moveaxis(x, (0, 1), (-1, 0)), gen(randn(2, 3, 4)),
           lambda x: np.moveaxis(x, (0, 1), (-1, 0))),
    OpCase("broadcast_to", lambda x: fnp.broadcast_to(x, (3, 4)), gen(randn(4)),
           lambda x: np.broadcast_to(x, (3, 4))),
    OpCase("broadcast_arrays", lambda x, y: fnp.broadcast_arrays(x, y), gen(randn(3, 1), randn(4)),
           lambda x, y: list(np.broadcast_arrays(x, y))),
    OpCase("expand_dims", lambda x: fnp.expand_dims(x, (0, -1)), gen(randn(2, 3)),
           lambda x: np.expand_dims(x, (0, -1))),
    OpCase("squeeze_axis", lambda x: fnp.squeeze(x, 1), gen(randn(2, 1, 3, 1)), lambda x: np.squeeze(x, 1)),
    OpCase("squeeze_all", fnp.squeeze, gen(randn(1, 3, 1)), np.squeeze),
    OpCase("squeeze_to_scalar", fnp.squeeze, gen(randn(1)), np.squeeze),
    OpCase("lax_squeeze", lambda x: lax.squeeze(x, (0, 2)), gen(randn(1, 3, 1)), lambda x: x.reshape(3)),
    OpCase("lax_expand_dims", lambda x: lax.expand_dims(x, (1,)), gen(randn(3)), lambda x: x[:, None]),
    OpCase("atleast_2d_3d", lambda x: (fnp.atleast_2d(x), fnp.atleast_3d(x), fnp.atleast_1d(x[0])),
           gen(randn(3)), lambda x: (np.atleast_2d(x), np.atleast_3d(x), np.atleast_1d(x[0]))),
    OpCase("convert_f32", lambda x: fnp.asarray(x, "float32"), gen(randn(3)),
           lambda x: x.astype(np.float32), diff=False),
    # joining / splitting
    OpCase("concatenate", lambda x, y: fnp.concatenate([x, y]), gen(randn(2, 3), randn(4, 3)),
           lambda x, y: np.concatenate([x, y])),
    OpCase("concatenate_3_last", lambda x, y, z: fnp.concatenate([x, y, z], axis=-1),
           gen(randn(2, 1), randn(2, 3), randn(2, 2)), lambda x, y, z: np.concatenate([x, y, z], -1)),
    OpCase("concatenate_none", lambda x, y: fnp.concatenate((x, y), axis=None),
           gen(randn(2, 2), randn(3)), lambda x, y: np.concatenate((x, y), axis=None)),
    OpCase("concatenate_empty", lambda x, y: fnp.concatenate([x, y]), gen(randn(0, 3), randn(2, 3)),
           lambda x, y: np.concatenate([x, y])),
    OpCase("concatenate_promote", lambda x, y: fnp.concatenate([x, y]),
           gen(ints(3, dtype=np.int32), randn(2, dtype=np.float32)),
           lambda x, y: np.concatenate([x, y]), diff=False),
    OpCase("concatenate_int", lambda x, y: fnp.concatenate([x, y], 1),
           gen(ints(2, 2), ints(2, 1)), lambda x, y: np.concatenate([x, y], 1), diff=False),
    OpCase("lax_concatenate", lambda x, y: lax.concatenate([x, y], 0), gen(randn(1, 2), randn(3, 2)),
           lambda x, y: np.concatenate([x, y])),
    OpCase("stack", lambda x, y: fnp.stack([x, y]), gen(randn(2, 3), randn(2, 3)),
           lambda x, y: np.stack([x, y])),
    OpCase("stack_last", lambda x, y: fnp.stack([x, y], axis=-1), gen(randn(3), randn(3)),
           lambda x, y: np.stack([x, y], axis=-1)),
    OpCase("stack_scalars", lambda x, y: fnp.stack([x, y, x]), gen(randn(), randn()),
           lambda x, y: np.stack([x, y, x])),
    OpCase("asarray_of_tracers", lambda x, y: fnp.asarray([[x, y], [y, x]]), gen(randn(), randn()),
           lambda x, y: np.array([[x, y], [y, x]])),
    OpCase("vstack", lambda x, y: fnp.vstack([x, y]), gen(randn(3), randn(2, 3)), lambda x, y: np.vstack([x, y])),
    OpCase("hstack", lambda x, y: fnp.hstack([x, y]), gen(randn(3), randn(2)), lambda x, y: np.hstack([x, y])),
    OpCase("hstack_2d", lambda x, y: fnp.hstack([x, y]), gen(randn(2, 1), randn(2, 2)),
           lambda x, y: np.hstack([x, y])),
    OpCase("dstack", lambda x, y: fnp.dstack([x, y]), gen(randn(2, 3), randn(2, 3)), lambda x, y: np.dstack([x, y])),
    OpCase("column_stack", lambda x, y: fnp.column_stack([x, y]), gen(randn(3), randn(3, 2)),
           lambda x, y: np.column_stack([x, y])),
    OpCase("split", lambda x: fnp.split(x, 3, axis=1), gen(randn(2, 6)), lambda x: np.split(x, 3, axis=1)),
    OpCase("split_indices", lambda x: fnp.split(x, [1, 4]), gen(randn(5, 2)), lambda x: np.split(x, [1, 4])),
    OpCase("array_split", lambda x: fnp.array_split(x, 3), gen(randn(7)), lambda x: np.array_split(x, 3)),
    # slice / rev / pad
    OpCase("lax_slice", lambda x: lax.slice(x, (1, 0), (4, 3), (2, 2)), gen(randn(5, 3)),
           lambda x: x[1:4:2, 0:3:2]),
    OpCase("lax_slice_empty", lambda x: lax.slice(x, (2,), (2,)), gen(randn(4)), lambda x: x[2:2]),
    OpCase("lax_rev", lambda x: lax.rev(x, (0, 2)), gen(randn(2, 3, 4)), lambda x: x[::-1, :, ::-1]),
    OpCase("flip", lambda x: fnp.flip(x, 1), gen(randn(2, 3)), lambda x: np.flip(x, 1)),
    OpCase("flip_all_f32", fnp.flip, gen(randn(2, 3, dtype=np.float32)), np.flip, diff=False),
    OpCase("flip_empty", fnp.flip, gen(randn(0, 2)), np.flip),
    OpCase("fliplr_flipud", lambda x: (fnp.fliplr(x), fnp.flipud(x)), gen(randn(3, 2)),
           lambda x: (np.fliplr(x), np.flipud(x))),
    OpCase("lax_pad", lambda x: lax.pad(x, 0.5, PAD_CFG), gen(randn(3, 4)),
           lambda x: _np_pad_ref(x, 0.5, PAD_CFG)),
    OpCase("lax_pad_value", lambda x, v: lax.pad(x, v, ((2, 1, 2),)), gen(randn(3), randn()),
           lambda x, v: _np_pad_ref(x, v, ((2, 1, 2),))),
    OpCase("lax_pad_empty", lambda x: lax.pad(x, 1.0, ((1, 2, 3), (0, 0, 0))), gen(randn(0, 2)),
           lambda x: _np_pad_ref(x, 1.0, ((1, 2, 3), (0, 0, 0)))),
    OpCase("pad_constant", lambda x: fnp.pad(x, ((1, 0), (2, 1)), constant_values=3.0), gen(randn(2, 3)),
           lambda x: np.pad(x, ((1, 0), (2, 1)), constant_values=3.0)),
    OpCase("pad_constant_pairs", lambda x: fnp.pad(x, 1, constant_values=((1.0, 2.0), (3.0, 4.0))),
           gen(randn(2, 2)), lambda x: np.pad(x, 1, constant_values=((1.0, 2.0), (3.0, 4.0)))),
    OpCase("pad_edge", lambda x: fnp.pad(x, (2, 1), mode="edge"), gen(randn(2, 3)),
           lambda x: np.pad(x, (2, 1), mode="edge")),
    OpCase("pad_reflect", lambda x: fnp.pad(x, ((3, 1),), mode="reflect"), gen(randn(3)),
           lambda x: np.pad(x, ((3, 1),), mode="reflect")),
    OpCase("pad_symmetric_wrap", lambda x: (fnp.pad(x, 2, mode="symmetric"), fnp.pad(x, (1, 4), mode="wrap")),
           gen(randn(3)), lambda x: (np.pad(x, 2, mode="symmetric"), np.pad(x, (1, 4), mode="wrap"))),
    OpCase("pad_int", lambda x: fnp.pad(x, 1), gen(ints(2, 2, dtype=np.int32)), lambda x: np.pad(x, 1), diff=False),
    # tile / repeat / roll
    OpCase("tile", lambda x: fnp.tile(x, (2, 3)), gen(randn(2, 2)), lambda x: np.tile(x, (2, 3))),
    OpCase("tile_rank_up", lambda x: fnp.tile(x, (2, 1, 2)), gen(randn(3)), lambda x: np.tile(x, (2, 1, 2))),
    OpCase("tile_scalar", lambda x: fnp.tile(x, 3), gen(randn()), lambda x: np.tile(x, 3)),
    OpCase("repeat", lambda x: fnp.repeat(x, 2, axis=1), gen(randn(2, 3)), lambda x: np.repeat(x, 2, axis=1)),
    OpCase("repeat_array", lambda x: fnp.repeat(x, [1, 0, 3]), gen(randn(3)), lambda x: np.repeat(x, [1, 0, 3])),
    OpCase("repeat_flat", lambda x: fnp.asarray(x).repeat(2), gen(randn(2, 2)), lambda x: x.repeat(2)),
    OpCase("roll", lambda x: fnp.roll(x, -4, axis=1), gen(randn(2, 3)), lambda x: np.roll(x, -4, axis=1)),
    OpCase("roll_flat_multi", lambda x: (fnp.roll(x, 5), fnp.roll(x, (1, 2), (0, 1))), gen(randn(2, 3)),
           lambda x: (np.roll(x, 5), np.roll(x, (1, 2), (0, 1)))),
    OpCase("roll_traced_shift", lambda x, s: fnp.roll(x, s, axis=0), gen(randn(4, 2), ints(low=-9, high=9)),
           lambda x, s: np.roll(x, int(s), axis=0)),
    # iota
    OpCase("lax_iota", lambda x: x + lax.broadcasted_iota(np.float64, (2, 3), 1), gen(randn(2, 3)),
           lambda x: x + np.arange(3.0)),
    OpCase("lax_iota_int", lambda x: x * lax.iota(np.int32, 4), gen(ints(4, dtype=np.int32)),
           lambda x: x * np.arange(4, dtype=np.int32), diff=False),
]
