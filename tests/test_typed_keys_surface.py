"""Typed PRNG keys' Array surface against JAX 0.10.2 (values measured with
``jax.random`` in /work/jaxvenv and hard-coded): ``.at[]`` get/set, ``tile``/``append``/
``moveaxis``/``swapaxes``/``transpose``/``broadcast_arrays``/``copy``,
``lax.slice``/``dynamic_update_slice``, ``eval_shape``, the Array attributes, and the
errors JAX raises (arithmetic, dtype conversion, promotion). test_typed_keys_numpy.py:
creation functions and comparisons."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax, random

kd = random.key_data
# JAX: key_data(split(key(5), 4))
K5 = [[2724472204, 3573582090], [202567368, 3886822060], [3594430910, 1784718894],
      [2939540675, 3076691462]]
ONES32 = [4294967295, 4294967295]


def keys():
    return random.split(random.key(5), 4)


def both(f, *args):
    """``f(*args)`` eagerly and under jit, as key data lists (both must be keys)."""
    out = [f(*args), ft.jit(f)(*args)]
    assert all(str(o.dtype) == "key<fry>" for o in out)
    return [kd(o).tolist() for o in out]


def test_at_get_and_set_whole_keys_as_jax():
    assert kd(keys()).tolist() == K5
    assert both(lambda k: k.at[1].get(), keys()) == [K5[1]] * 2
    assert both(lambda k: k.at[7].get(mode="fill"), keys()) == [ONES32] * 2
    assert both(lambda k: k.at[1:3].set(random.key(9)), keys()) == [
        [K5[0], [0, 9], [0, 9], K5[3]]] * 2
    mask = np.array([False, True, False, True])
    assert both(lambda k: k.at[mask].set(random.key(9)), keys()) == [
        [K5[0], [0, 9], K5[2], [0, 9]]] * 2
    eq = random.key(9) == keys().at[1:3].set(random.key(9))
    assert eq.tolist() == [False, True, True, False]
    with pytest.raises(TypeError, match="cannot mix typed PRNG keys"):
        keys().at[0].set(np.uint32(3))


def test_structural_functions_on_keys_as_jax():
    assert both(lambda k: fnp.tile(k, 3), random.key(123)) == [[[0, 123]] * 3] * 2
    ks = random.split(random.key(1), 2)
    assert both(fnp.append, ks, random.key(2)) == [
        [[507451445, 1853169794], [1948878966, 4237131848], [0, 2]]] * 2
    m = keys().reshape(2, 2)
    assert both(lambda k: fnp.moveaxis(k, 0, 1), m) == [[[K5[0], K5[2]], [K5[1], K5[3]]]] * 2
    assert both(lambda k: fnp.swapaxes(k, 0, 1), m) == [[[K5[0], K5[2]], [K5[1], K5[3]]]] * 2
    assert both(lambda k: fnp.transpose(k), m) == [[[K5[0], K5[2]], [K5[1], K5[3]]]] * 2
    assert both(lambda a, b: fnp.broadcast_arrays(a, b)[0], random.key(3), keys()) == [
        [[0, 3]] * 4] * 2
    assert both(fnp.copy, keys()) == [K5] * 2
    assert fnp.shape(m) == (2, 2) and fnp.ndim(m) == 2 and fnp.size(m) == 4


def test_lax_slices_of_keys_as_jax():
    assert both(lambda k: lax.slice(k, (1,), (3,)), keys()) == [K5[1:3]] * 2
    assert both(lambda k: lax.slice_in_dim(k, 1, 3), keys()) == [K5[1:3]] * 2
    assert both(lambda k: lax.dynamic_update_slice(k, k[:1], (np.int16(2),)), keys()) == [
        [K5[0], K5[1], K5[0], K5[3]]] * 2
    assert both(lambda k: lax.dynamic_update_slice_in_dim(k, k[:1], 2, axis=0), keys()) == [
        [K5[0], K5[1], K5[0], K5[3]]] * 2


def test_eval_shape_of_keys_as_jax():
    s = ft.ShapeDtypeStruct.like(random.key(1701))
    assert repr(s) == "ShapeDtypeStruct(shape=(), dtype=key<fry>)"
    assert ft.eval_shape(lambda x: x, s) == s
    out = ft.eval_shape(lambda k: (random.split(k, 3), random.normal(k, (2,))), s)
    assert repr(out[0]) == "ShapeDtypeStruct(shape=(3,), dtype=key<fry>)"
    assert out[1].shape == (2,)
    assert ft.eval_shape(lambda k: random.split(k, 3), random.key(0)) == ft.ShapeDtypeStruct(
        (3,), random.key_dtype())


def test_array_attributes_of_keys_as_jax():
    k = keys()
    assert (k.itemsize, k.nbytes, k.dtype.itemsize) == (8, 32, 8)
    assert k.device == kd(k).device and k.devices() == kd(k).devices()
    assert k.is_fully_addressable and k.block_until_ready() is k
    for c in (k.copy(), copy.copy(k), copy.deepcopy(k), ft.jit(lambda x: x.copy())(k)):
        assert str(c.dtype) == "key<fry>" and kd(c).tolist() == K5
    assert kd(k.addressable_data(0)).tolist() == K5
    assert k[None, 0, ..., None].shape == (1, 1)
    with pytest.raises(IndexError, match="Too many indices: key array is 1-dimensional, but 2"):
        k[0, 1]
    with pytest.raises(IndexError, match="Too many indices"):
        random.key(0)[0]
    assert not k.is_deleted()
    k.delete()
    assert k.is_deleted()


def test_keys_refuse_numbers_as_jax():
    k = keys()
    with pytest.raises(TypeError, match=r"add does not accept dtypes key<fry>, int"):
        k + 1
    with pytest.raises(TypeError, match="add does not accept dtype key<fry>"):
        k + k
    with pytest.raises(TypeError, match="neg does not accept dtype key<fry>"):
        -k
    with pytest.raises(ValueError, match="Cannot convert_element_type from key<fry> to int64"):
        lax.convert_element_type(k, np.int64)
    with pytest.raises(ValueError, match="Cannot convert_element_type from int32 to key<fry>"):
        lax.convert_element_type(np.int32(0), k.dtype)
    with pytest.raises(TypeError, match="JAX array with PRNGKey dtype cannot be converted"):
        np.asarray(k)
    assert fnp.result_type(k) == k.dtype and fnp.result_type(k, k.dtype) == k.dtype
    with pytest.raises(ValueError, match="not a valid dtype for JAX type promotion"):
        fnp.result_type(k, np.uint32)


def test_custom_jvp_rule_sees_float0_key_tangents_as_jax():
    seen = []

    @ft.custom_jvp
    def f(x, k):
        return x * random.normal(k, ())

    @f.defjvp
    def f_jvp(primals, tangents):
        (x, k), (x_dot, k_dot) = primals, tangents
        seen.append(k_dot)
        r = random.normal(k, ())
        return x * r, x_dot * r

    ks = random.split(random.key(3), 3)
    want = ft.grad(lambda x, k: x * random.normal(k, ()))(0.0, ks[0])
    assert ft.grad(f)(0.0, ks[0]) == want and ft.jit(ft.grad(f))(0.0, ks[0]) == want
    assert all(t.dtype == ft.dtypes.float0 and t.shape == () for t in seen)   # JAX: float0[]
    out = ft.vmap(ft.grad(f), in_axes=(None, 0))(0.0, ks)
    assert out.shape == (3,) and float(out[0]) == float(want)
    assert seen[-1].dtype == ft.dtypes.float0


# JAX 0.10.2 (x64): key_data of each function of split(key(5), 6) (k) and k.reshape(2, 3) (m)
MOVED = {'roll': [[898128576, 3750995185], [972824557, 2491659272], [2724472204, 3573582090],
          [202567368, 3886822060], [3594430910, 1784718894], [2939540675, 3076691462]],
 'roll2': [[[3594430910, 1784718894], [2724472204, 3573582090], [202567368, 3886822060]],
           [[972824557, 2491659272], [2939540675, 3076691462], [898128576, 3750995185]]],
 'rollNone': [[[972824557, 2491659272], [2724472204, 3573582090], [202567368, 3886822060]],
              [[3594430910, 1784718894], [2939540675, 3076691462], [898128576, 3750995185]]],
 'repeat': [[2724472204, 3573582090], [2724472204, 3573582090], [202567368, 3886822060],
            [202567368, 3886822060]],
 'repeatax': [[[2724472204, 3573582090], [202567368, 3886822060], [3594430910, 1784718894]],
              [[2939540675, 3076691462], [898128576, 3750995185], [972824557, 2491659272]],
              [[2939540675, 3076691462], [898128576, 3750995185], [972824557, 2491659272]]],
 'split': [[[2724472204, 3573582090], [202567368, 3886822060]],
           [[3594430910, 1784718894], [2939540675, 3076691462]],
           [[898128576, 3750995185], [972824557, 2491659272]]],
 'asplit': [[[2724472204, 3573582090], [202567368, 3886822060]],
            [[3594430910, 1784718894], [2939540675, 3076691462]], [[898128576, 3750995185]],
            [[972824557, 2491659272]]],
 'hsplit': [[[[2724472204, 3573582090]], [[2939540675, 3076691462]]],
            [[[202567368, 3886822060]], [[898128576, 3750995185]]],
            [[[3594430910, 1784718894]], [[972824557, 2491659272]]]],
 'rot90': [[[3594430910, 1784718894], [972824557, 2491659272]],
           [[202567368, 3886822060], [898128576, 3750995185]],
           [[2724472204, 3573582090], [2939540675, 3076691462]]],
 'unstack': [[[2724472204, 3573582090], [2939540675, 3076691462]],
             [[202567368, 3886822060], [898128576, 3750995185]],
             [[3594430910, 1784718894], [972824557, 2491659272]]],
 'jitroll': [[3594430910, 1784718894], [2939540675, 3076691462], [898128576, 3750995185],
             [972824557, 2491659272], [2724472204, 3573582090], [202567368, 3886822060]]}


def test_functions_that_move_whole_keys_as_jax():
    k = random.split(random.key(5), 6)
    m = k.reshape(2, 3)
    cases = {
        "roll": lambda: fnp.roll(k, 2), "roll2": lambda: fnp.roll(m, 1, axis=1),
        "rollNone": lambda: fnp.roll(m, 1), "repeat": lambda: fnp.repeat(k[:2], 2),
        "repeatax": lambda: fnp.repeat(m, np.array([1, 2]), axis=0),
        "split": lambda: fnp.split(k, 3), "asplit": lambda: fnp.array_split(k, 4),
        "hsplit": lambda: fnp.hsplit(m, 3), "rot90": lambda: fnp.rot90(m),
        "unstack": lambda: fnp.unstack(m, axis=1),
        "jitroll": lambda: ft.jit(lambda a, s: fnp.roll(a, s))(k, 4),
    }
    for name, f in cases.items():
        out = f()
        got = [kd(p).tolist() for p in out] if isinstance(out, (list, tuple)) else kd(out).tolist()
        assert got == MOVED[name], name


# JAX 0.10.2 (x64): key_data of flips / atleast_* / stacks of k and m as above
FLIPPED = {'flip': [[[972824557, 2491659272], [898128576, 3750995185], [2939540675, 3076691462]],
          [[3594430910, 1784718894], [202567368, 3886822060], [2724472204, 3573582090]]],
 'flip1': [[[3594430910, 1784718894], [202567368, 3886822060], [2724472204, 3573582090]],
           [[972824557, 2491659272], [898128576, 3750995185], [2939540675, 3076691462]]],
 'fliplr': [[[3594430910, 1784718894], [202567368, 3886822060], [2724472204, 3573582090]],
            [[972824557, 2491659272], [898128576, 3750995185], [2939540675, 3076691462]]],
 'flipud': [[[2939540675, 3076691462], [898128576, 3750995185], [972824557, 2491659272]],
            [[2724472204, 3573582090], [202567368, 3886822060], [3594430910, 1784718894]]],
 'at1': [[2724472204, 3573582090]],
 'at2': [[[2724472204, 3573582090], [202567368, 3886822060]]],
 'at3': (1, 2, 1),
 'vstack': [[[2724472204, 3573582090], [202567368, 3886822060]],
            [[3594430910, 1784718894], [2939540675, 3076691462]]],
 'hstack': [[2724472204, 3573582090], [898128576, 3750995185], [972824557, 2491659272]],
 'jitflip': [[972824557, 2491659272], [898128576, 3750995185], [2939540675, 3076691462],
             [3594430910, 1784718894], [202567368, 3886822060], [2724472204, 3573582090]]}


def test_flips_atleast_and_stacks_of_keys_as_jax():
    k = random.split(random.key(5), 6)
    m = k.reshape(2, 3)
    cases = {
        "flip": lambda: fnp.flip(m), "flip1": lambda: fnp.flip(m, 1),
        "fliplr": lambda: fnp.fliplr(m), "flipud": lambda: fnp.flipud(m),
        "at1": lambda: fnp.atleast_1d(k[0]), "at2": lambda: fnp.atleast_2d(k[:2]),
        "vstack": lambda: fnp.vstack([k[:2], k[2:4]]), "hstack": lambda: fnp.hstack([k[:1], k[4:]]),
        "jitflip": lambda: ft.jit(fnp.flip)(k),
    }
    for name, f in cases.items():
        assert kd(f()).tolist() == FLIPPED[name], name
    assert fnp.atleast_3d(k[:2]).shape == FLIPPED["at3"]
