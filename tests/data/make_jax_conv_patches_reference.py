"""Regenerate jax_conv_patches_reference.npz from JAX (run only where JAX is installed; JAX
is not a dependency of functrans):  python tests/data/make_jax_conv_patches_reference.py

lax.conv_general_dilated_patches of random float64 inputs for PATCH_CASES (shared with
tests/test_conv_patches.py) and its VJP with a random cotangent; lax.conv_general_dilated_local
on the same inputs with a random unshared kernel (4 output features) and its VJPs."""
import os

import numpy as np
import jax

jax.config.update("jax_enable_x64", True)
import jax.lax as jl  # noqa: E402

# (lhs shape, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation, dn)
PATCH_CASES = [
    ((2, 3, 6, 5), (3, 2), (1, 2), "SAME", None, None, None),
    ((2, 3, 6, 5), (2, 2), (2, 1), [(1, 0), (2, -1)], (1, 2), (2, 1), None),
    ((2, 6, 5, 3), (3, 3), (1, 1), "VALID", None, (2, 1), ("NHWC", "HWIO", "NHWC")),
    ((1, 2, 7), (3,), (2,), [(0, 1)], (2,), None, None),
    ((2, 4, 5, 3), (2, 3), (1, 1), "SAME", None, None, ("NCHW", "OIHW", "NHWC")),
]


def main():
    out = {}
    for j, (xs, f, s, p, ld, rd, dn) in enumerate(PATCH_CASES):
        rng = np.random.default_rng(j)
        x = rng.standard_normal(xs)
        y, vjp = jax.vjp(lambda v: jl.conv_general_dilated_patches(v, f, s, p, ld, rd, dn), x)
        ct = rng.standard_normal(y.shape)
        out[f"x{j}"], out[f"y{j}"], out[f"ct{j}"] = x, np.asarray(y), ct
        out[f"g{j}"] = np.asarray(vjp(ct)[0])
        d = jl.conv_dimension_numbers(xs, (1, 1) + tuple(f), dn)
        canon = (4, y.shape[d.out_spec[1]]) + tuple(y.shape[i] for i in d.out_spec[2:])
        wshape = [0] * len(canon)
        for pos, size in zip(d.rhs_spec, canon):
            wshape[pos] = size
        w = rng.standard_normal(wshape)
        z, vjp2 = jax.vjp(lambda a, b: jl.conv_general_dilated_local(a, b, s, p, f, ld, rd, dn),
                          x, w)
        ct2 = rng.standard_normal(z.shape)
        out[f"w{j}"], out[f"z{j}"], out[f"ctz{j}"] = w, np.asarray(z), ct2
        out[f"gzx{j}"], out[f"gzw{j}"] = (np.asarray(g) for g in vjp2(ct2))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "jax_conv_patches_reference.npz")
    np.savez(path, jax_version=np.asarray(jax.__version__), **out)
    print(f"wrote {len(PATCH_CASES)} cases to {path}")


if __name__ == "__main__":
    main()
