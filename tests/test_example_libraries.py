"""stax + optimizers: a tiny model trains (loss decreases) and equals a hand-written
version step for step; each optimizer's update matches its formula written in numpy;
schedules, state packing, jit of the state, and the layer combinators."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import random
from functrans.example_libraries import optimizers, stax

rng = np.random.default_rng(0)
X = rng.normal(size=(32, 3))
Y = np.sin(X @ np.array([1.0, -2.0, 0.5]))[:, None]


def test_tiny_model_trains_and_equals_hand_written():
    init, apply = stax.serial(stax.Dense(8), stax.Tanh, stax.Dense(1))
    _, params = init(random.key(0), (-1, 3))

    def loss(p):
        return fnp.mean((apply(p, X) - Y) ** 2)

    opt_init, opt_update, get_params = optimizers.adam(0.05)

    @ft.jit
    def step(i, state):
        g = ft.grad(loss)(get_params(state))
        return opt_update(i, g, state)

    state = opt_init(params)
    losses = [float(loss(params))]
    for i in range(60):
        state = step(i, state)
        losses.append(float(loss(get_params(state))))
    assert losses[-1] < 0.3 * losses[0]

    # the same model and Adam written out by hand, in numpy
    (W1, b1), (), (W2, b2) = [tuple(np.asarray(a) for a in layer) for layer in params]
    theta = [W1, b1, W2, b2]

    def hand_loss(t):
        h = fnp.tanh(X @ t[0] + t[1])
        return fnp.mean((h @ t[2] + t[3] - Y) ** 2)
    m = [np.zeros_like(t) for t in theta]
    v = [np.zeros_like(t) for t in theta]
    for i in range(60):
        g = [np.asarray(x) for x in ft.grad(hand_loss)(theta)]
        for j in range(4):
            m[j] = 0.1 * g[j] + 0.9 * m[j]
            v[j] = 0.001 * g[j] ** 2 + 0.999 * v[j]
            mh = m[j] / (1 - 0.9 ** (i + 1))
            vh = v[j] / (1 - 0.999 ** (i + 1))
            theta[j] = theta[j] - 0.05 * mh / (np.sqrt(vh) + 1e-8)
    final = get_params(state)
    got = [final[0][0], final[0][1], final[2][0], final[2][1]]
    for a, b in zip(got, theta):
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-9, atol=1e-11)
    assert float(hand_loss(theta)) == pytest.approx(losses[-1], rel=1e-9)


def _numpy_step(name, x, g, st, i):
    """One step of each optimizer, from its formula."""
    if name == "sgd":
        return x - 0.1 * g, st
    if name == "momentum":
        v = 0.9 * st.get("v", 0) + g
        return x - 0.1 * v, {"v": v}
    if name == "nesterov":
        v = 0.9 * st.get("v", 0) + g
        return x - 0.1 * (0.9 * v + g), {"v": v}
    if name == "adagrad":
        gs = st.get("gs", 0) + g * g
        m = 0.1 * g / np.sqrt(gs) + 0.9 * st.get("m", 0)
        return x - 0.1 * m, {"gs": gs, "m": m}
    if name == "rmsprop":
        a = st.get("a", 0) * 0.9 + 0.1 * g * g
        return x - 0.1 * g / np.sqrt(a + 1e-8), {"a": a}
    if name == "rmsprop_momentum":
        a = st.get("a", 0) * 0.9 + 0.1 * g * g
        mom = 0.9 * st.get("mom", 0) + 0.1 * g / np.sqrt(a + 1e-8)
        return x - mom, {"a": a, "mom": mom}
    if name == "adamax":
        m = 0.1 * g + 0.9 * st.get("m", 0)
        u = np.maximum(0.999 * st.get("u", 0), np.abs(g))
        return x - 0.1 / (1 - 0.9 ** (i + 1)) * m / (u + 1e-8), {"m": m, "u": u}
    raise KeyError(name)


OPTS = {"sgd": lambda: optimizers.sgd(0.1), "momentum": lambda: optimizers.momentum(0.1, 0.9),
        "nesterov": lambda: optimizers.nesterov(0.1, 0.9),
        "adagrad": lambda: optimizers.adagrad(0.1), "rmsprop": lambda: optimizers.rmsprop(0.1),
        "rmsprop_momentum": lambda: optimizers.rmsprop_momentum(0.1),
        "adamax": lambda: optimizers.adamax(0.1)}


@pytest.mark.parametrize("name", sorted(OPTS))
def test_optimizer_matches_formula(name):
    init, update, get_params = OPTS[name]()
    x = np.array([1.0, -2.0, 0.5])
    state = init({"x": x})
    xs, st = x.copy(), {}
    for i in range(4):
        g = np.cos(xs * (i + 1))
        state = ft.jit(update)(i, {"x": g}, state) if i % 2 else update(i, {"x": g}, state)
        xs, st = _numpy_step(name, xs, g, st, i)
        np.testing.assert_allclose(np.asarray(get_params(state)["x"]), xs, rtol=1e-12)


def test_sm3_matches_formula():
    init, update, get_params = optimizers.sm3(0.1)
    x = rng.normal(size=(2, 3))
    state = init(x)
    xs, m, vr, vc = x.copy(), np.zeros_like(x), np.zeros(2), np.zeros(3)
    for i in range(3):
        g = np.cos(xs + i)
        state = update(i, g, state)
        acc = np.minimum(vr[:, None], vc[None, :]) + g * g
        m = 0.1 * g / np.sqrt(acc) + 0.9 * m
        xs = xs - 0.1 * m
        vr, vc = acc.max(1), acc.max(0)
        np.testing.assert_allclose(np.asarray(get_params(state)), xs, rtol=1e-12)


def test_schedules():
    i = np.arange(0, 30, 7)
    np.testing.assert_allclose([float(optimizers.exponential_decay(2.0, 10, 0.5)(k)) for k in i],
                               2.0 * 0.5 ** (i / 10))
    np.testing.assert_allclose(
        [float(optimizers.inverse_time_decay(1.0, 10, 2.0)(k)) for k in i], 1 / (1 + 2 * i / 10))
    np.testing.assert_allclose(
        [float(optimizers.polynomial_decay(1.0, 20, 0.1, 2.0)(k)) for k in i],
        (1 - np.minimum(i, 20) / 20) ** 2 * 0.9 + 0.1)
    s = optimizers.piecewise_constant([5, 15], [1.0, 0.1, 0.01])
    assert [float(s(k)) for k in (0, 5, 6, 15, 16)] == [1.0, 1.0, 0.1, 0.1, 0.01]
    assert float(ft.jit(s)(np.asarray(16))) == 0.01
    sched = optimizers.sgd(optimizers.exponential_decay(1.0, 1, 0.5))
    st = sched.init_fn(np.zeros(1))
    for k in range(3):
        st = sched.update_fn(k, np.ones(1), st)
    assert float(sched.params_fn(st)[0]) == -(1 + 0.5 + 0.25)


def test_state_pack_unpack_and_utilities():
    params = {"a": np.ones(2), "b": (np.zeros(3),)}
    opt = optimizers.adam(0.1)
    state = opt.update_fn(0, {"a": np.ones(2), "b": (np.ones(3),)}, opt.init_fn(params))
    marked = optimizers.unpack_optimizer_state(state)
    back = optimizers.pack_optimizer_state(marked)
    assert back.tree_def == state.tree_def and back.subtree_defs == state.subtree_defs
    for u, w in zip(ft.tree_util.tree_leaves(back), ft.tree_util.tree_leaves(state)):
        np.testing.assert_array_equal(np.asarray(u), np.asarray(w))
    tree = {"a": np.array([3.0]), "b": np.array([4.0])}
    assert float(optimizers.l2_norm(tree)) == 5.0
    clipped = optimizers.clip_grads(tree, 1.0)
    assert float(optimizers.l2_norm(clipped)) == pytest.approx(1.0)
    assert optimizers.clip_grads(tree, 10.0)["a"].tolist() == [3.0]
    with pytest.raises(TypeError):
        opt.update_fn(1, {"a": np.ones(2)}, state)


def test_layers():
    k = random.key(0)
    x = rng.normal(size=(4, 2, 3))
    shape, params = stax.Flatten[0](k, x.shape)
    assert shape == (4, 6) and stax.Flatten[1](params, x).shape == (4, 6)
    init, apply = stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(5), stax.Identity),
                              stax.FanInConcat())
    shape, params = init(k, (4, 3))
    assert shape == (4, 8) and apply(params, x[:, 0]).shape == (4, 8)
    init, apply = stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(3), stax.Dense(3)),
                              stax.FanInSum)
    shape, params = init(k, (4, 3))
    (W1, b1), (W2, b2) = params[1]
    np.testing.assert_allclose(np.asarray(apply(params, x[:, 0])),
                               x[:, 0] @ W1 + b1 + x[:, 0] @ W2 + b2, rtol=1e-12)
    for layer, ref in [(stax.Relu, lambda v: np.maximum(v, 0)), (stax.Tanh, np.tanh),
                       (stax.Sigmoid, lambda v: 1 / (1 + np.exp(-v))),
                       (stax.Softplus, lambda v: np.log1p(np.exp(v))),
                       (stax.Exp, np.exp), (stax.Identity, lambda v: v)]:
        np.testing.assert_allclose(np.asarray(layer[1]((), x)), ref(x), rtol=1e-12)
    for layer in (stax.Elu, stax.LeakyRelu, stax.Selu, stax.Gelu, stax.Softmax,
                  stax.LogSoftmax):
        assert layer[1]((), x).shape == x.shape
    bn_init, bn_apply = stax.BatchNorm(axis=(0, 1))
    _, bn_params = bn_init(k, x.shape)
    z = np.asarray(bn_apply(bn_params, x))
    np.testing.assert_allclose(z.mean((0, 1)), 0, atol=1e-12)
    np.testing.assert_allclose(z.var((0, 1)), 1 / (1 + 1e-5 / x.var((0, 1))), rtol=1e-9)
    d_init, d_apply = stax.Dropout(0.75)
    out = np.asarray(d_apply((), np.ones((400, 50)), rng=random.key(2)))
    assert set(np.unique(out)) <= {0.0, 1 / 0.75}
    assert abs((out > 0).mean() - 0.75) < 0.01
    with pytest.raises(ValueError, match="rng"):
        d_apply((), np.ones(3))
    init, apply = stax.shape_dependent(lambda s: stax.Dense(s[-1] * 2))
    assert init(k, (2, 3))[0] == (2, 6)


def test_tiny_cnn_trains_and_its_gradient_matches_finite_differences():
    # Conv, MaxPool, AvgPool and SumPool (issue 14.5) in one small classifier
    init, apply = stax.serial(
        stax.Conv(4, (3, 3), padding="SAME"), stax.Relu, stax.MaxPool((2, 2), (2, 2)),
        stax.Conv(6, (2, 2), strides=(1, 1)), stax.Tanh, stax.AvgPool((2, 2), padding="SAME"),
        stax.SumPool((2, 2)), stax.Flatten, stax.Dense(2), stax.LogSoftmax)
    data = np.random.default_rng(3)
    xs = data.normal(size=(8, 8, 8, 1))
    labels = (xs[:, :4].sum(axis=(1, 2, 3)) > xs[:, 4:].sum(axis=(1, 2, 3))).astype(int)
    onehot = np.eye(2)[labels]
    out_shape, params = init(random.key(0), (-1, 8, 8, 1))
    assert out_shape == (-1, 2)
    assert apply(params, xs).shape == (8, 2)

    def loss(p):
        return -fnp.mean(fnp.sum(apply(p, xs) * onehot, axis=1))

    grad = ft.jit(ft.grad(loss))
    g = grad(params)
    direction = ft.tree_util.tree_map(lambda a: data.normal(size=np.shape(a)), params)
    eps = 1e-6
    shift = lambda s: ft.tree_util.tree_map(lambda a, d: a + s * d, params, direction)  # noqa: E731
    fd = (float(loss(shift(eps))) - float(loss(shift(-eps)))) / (2 * eps)
    dot = sum(float(np.vdot(np.asarray(a), d)) for a, d in
              zip(ft.tree_util.tree_leaves(g), ft.tree_util.tree_leaves(direction)))
    assert abs(dot - fd) < 1e-6 * max(1.0, abs(fd)), (dot, fd)

    opt_init, opt_update, get_params = optimizers.adam(0.05)

    @ft.jit
    def step(i, state):
        return opt_update(i, ft.grad(loss)(get_params(state)), state)

    state = opt_init(params)
    first = float(loss(params))
    for i in range(30):
        state = step(i, state)
    assert float(loss(get_params(state))) < 0.7 * first


@pytest.mark.parametrize("x_dtype,p_dtype", [(np.float32, np.float64), (np.float64, np.float32),
                                             (np.float32, np.float32)])
def test_conv_promotes_mixed_input_and_param_dtypes(x_dtype, p_dtype):
    # lax.conv_general_dilated needs one dtype; Conv promotes as fnp (float32 x float64: f64)
    init, apply = stax.serial(stax.Conv(3, (2, 2), padding="SAME"), stax.Relu, stax.Flatten,
                              stax.Dense(2))
    _, params = init(random.key(0), (-1, 5, 5, 2))
    params = ft.tree_util.tree_map(lambda a: np.asarray(a, p_dtype), params)
    xs = np.random.default_rng(4).normal(size=(3, 5, 5, 2)).astype(x_dtype)
    want_dt = np.result_type(x_dtype, p_dtype)
    out = apply(params, xs)
    assert out.shape == (3, 2) and out.dtype == want_dt
    p64 = ft.tree_util.tree_map(lambda a: np.asarray(a, np.float64), params)
    ref = np.asarray(apply(p64, xs.astype(np.float64)))
    np.testing.assert_allclose(out, ref, rtol=1e-5 if want_dt == np.float32 else 1e-12,
                               atol=1e-6 if want_dt == np.float32 else 0)
    g = ft.jit(ft.grad(lambda p, x: fnp.sum(apply(p, x) ** 2), argnums=(0, 1)))(params, xs)
    g_ref = ft.grad(lambda p, x: fnp.sum(apply(p, x) ** 2), argnums=(0, 1))(
        p64, xs.astype(np.float64))
    for a, b in zip(ft.tree_util.tree_leaves(g), ft.tree_util.tree_leaves(g_ref)):
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=1e-5)
    assert [a.dtype for a in ft.tree_util.tree_leaves(g[0])] == [np.dtype(p_dtype)] * 4
    assert g[1].dtype == np.dtype(x_dtype)


def test_sm3_keeps_a_0d_parameter_0d():
    """sm3's get_params gave a 0-d parameter back with shape (1,) (JAX restores the
    shape; found by optimizers_test on a tree with a 0-d leaf); the update is unchanged."""
    init, update, get_params = optimizers.sm3(0.1)
    st = init({"b": np.array(0.5), "w": np.array([1.0, -1.0])})
    for i in range(3):
        p = get_params(st)
        st = update(i, ft.tree_util.tree_map(lambda v: 2 * v + fnp.cos(v), p), st)
    p = get_params(st)
    assert p["b"].shape == () and p["w"].shape == (2,)
    init1, update1, get1 = optimizers.sm3(0.1)
    s1 = init1(np.array([0.5]))
    for i in range(3):
        q = get1(s1)
        s1 = update1(i, 2 * q + fnp.cos(q), s1)
    np.testing.assert_allclose(float(p["b"]), float(get1(s1)[0]), rtol=1e-14)
