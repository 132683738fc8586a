"""Impl.compile(): the emitted C as a shared library, called on numpy arrays and compared with
numpy. Tolerance for f32 matmuls: the classic bound of a k-term dot product,
|computed - exact| <= k * u * (|A| @ |B|) with u = 2^-24, elementwise."""

import numpy as np
import pytest

import morello

U = 2.0**-24


def matmul_bound(a, b):
    k = a.shape[-1]
    return k * U * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))


def test_the_compiled_matmul_equals_numpy(matmul64):
    kernel = matmul64.compile()
    assert kernel.max_abs_error is not None, "verified against the reference interpreter"
    rng = np.random.default_rng(7)
    a = rng.standard_normal((64, 64), dtype=np.float32)
    b = rng.standard_normal((64, 64), dtype=np.float32)
    c = kernel(a, b)
    assert c.shape == (64, 64) and c.dtype == np.float32
    exact = a.astype(np.float64) @ b.astype(np.float64)
    assert np.all(np.abs(c - exact) <= matmul_bound(a, b))
    # With its batch dim, and into a given output.
    out = np.empty((1, 64, 64), dtype=np.float32)
    same = kernel(a[None], b[None], out=out)
    assert same is out or np.shares_memory(same, out)
    np.testing.assert_array_equal(out[0], c)


def test_inputs_are_converted_into_the_layout(matmul64):
    kernel = matmul64.compile(verify=False)
    rng = np.random.default_rng(3)
    a = rng.standard_normal((64, 64))  # float64, converted
    b = np.asfortranarray(rng.standard_normal((64, 64), dtype=np.float32))  # copied to row-major
    c = kernel(a, b)
    a32 = a.astype(np.float32)
    exact = a32.astype(np.float64) @ b.astype(np.float64)
    assert np.all(np.abs(c - exact) <= matmul_bound(a32, b))


def test_wrong_arrays_are_morello_errors(matmul64):
    kernel = matmul64.compile(verify=False)
    a = np.zeros((64, 64), dtype=np.float32)
    with pytest.raises(morello.MorelloError, match=r"takes 2 arrays \(lhs, rhs\), not 1"):
        kernel(a)
    with pytest.raises(morello.MorelloError, match="parameter `rhs` has shape 1x64x64, but the array has shape 64x32"):
        kernel(a, np.zeros((64, 32), dtype=np.float32))
    with pytest.raises(morello.MorelloError, match="does not convert"):
        kernel(a, np.zeros((64, 64), dtype=np.complex64))


def test_an_integer_matmul_is_exact(db):
    kernel = morello.search("matmul 8x16x8", dtype="u32", db=db).compile()
    rng = np.random.default_rng(1)
    a = rng.integers(0, 1000, (8, 16), dtype=np.uint32)
    b = rng.integers(0, 1000, (16, 8), dtype=np.uint32)
    np.testing.assert_array_equal(kernel(a, b), a @ b)


def test_an_accumulating_matmul_adds_into_its_output(db):
    kernel = morello.search("matmul 8x8x8", accum=True, db=db).compile()
    assert [p.role for p in kernel.params] == ["input", "input", "inout"]
    a = np.arange(64, dtype=np.float32).reshape(8, 8) / 64
    b = np.eye(8, dtype=np.float32)
    c = np.ones((8, 8), dtype=np.float32)
    result = kernel(a, b, c)
    np.testing.assert_allclose(result, 1 + a, rtol=1e-6)
    np.testing.assert_allclose(c, 1 + a, rtol=1e-6)  # updated in place: its memory is the buffer


def test_a_matmul_with_bias_and_relu(db):
    kernel = morello.search("matmul 8x8x16", epilogue="bias,relu", db=db).compile()
    rng = np.random.default_rng(5)
    a = rng.standard_normal((8, 8), dtype=np.float32)
    b = rng.standard_normal((8, 16), dtype=np.float32)
    bias_param = kernel.params[2]
    bias = rng.standard_normal(bias_param.shape[-1], dtype=np.float32).reshape(bias_param.shape)
    c = kernel(a, b, bias)
    exact = np.maximum(a.astype(np.float64) @ b + bias.reshape(-1), 0)
    assert np.all(np.abs(c - exact) <= matmul_bound(a, b) + 1e-6)


@pytest.mark.parametrize(
    "source, destination",
    [("row-major", "col-major"), ("col-major", "row-major"), ("row-major", "[1, 0, 1 p(4)]")],
)
def test_moves_between_layouts_keep_every_element(db, source, destination):
    kernel = morello.search("move 8x8", from_layout=source, to_layout=destination, db=db).compile()
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    np.testing.assert_array_equal(kernel(x), x)
    np.testing.assert_array_equal(kernel(np.asfortranarray(x)), x)


def test_a_fill_takes_no_input(db):
    kernel = morello.search("zero 4x8", db=db).compile()
    np.testing.assert_array_equal(kernel(), np.zeros((4, 8), dtype=np.float32))


def test_a_foreign_target_is_refused(db):
    impl = morello.search("matmul 4x4x4", target="arm-neon", no_db=True)
    assert "float32x4_t" in impl.c_source() or "vfmaq" in impl.c_source()
    with pytest.raises(morello.MorelloError, match="is aarch64 code"):
        impl.compile()
