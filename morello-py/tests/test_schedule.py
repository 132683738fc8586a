"""morello.Schedule: hand steps checked as they are added, completed by the search; the printed
optimum read back gives the same tree and cost."""

import numpy as np
import pytest

import morello


def test_the_optimum_read_back_as_a_schedule_is_the_same_tree(db, matmul64):
    text = matmul64.schedule()
    assert text.splitlines()[0].split()[0] in {"move_to", "tile_out", "parallel", "to_accum", "split", "select"}
    again = morello.Schedule.of(matmul64).apply_text(text).synthesize()
    assert again.cost == matmul64.cost
    assert again.tree() == matmul64.tree()


def test_hand_steps_then_synthesis_cost_at_least_the_optimum(db, matmul64):
    schedule = morello.Schedule("matmul 64x64x64", db=db).tile_out([1, 16, 64])
    assert schedule.spec == matmul64.spec
    leaves = schedule.open_leaves()
    assert len(leaves) == 1 and leaves[0].startswith("Matmul(1x16x64x64")
    assert "tile 1x16x64x64" in schedule.tree()
    impl = schedule.synthesize()
    assert impl.cost >= matmul64.cost
    a = np.ones((64, 64), dtype=np.float32)
    np.testing.assert_array_equal(impl.compile()(a, a), np.full((64, 64), 64, dtype=np.float32))


def test_a_register_block_by_hand(db):
    lanes = 16 if "avx512" in morello.search("zero 1x16", db=db).target else 8
    schedule = (
        morello.Schedule("matmul 8x8x16", db=db)
        .move_to("out", "L2")
        .move_to("lhs", "L2")
        .move_to("rhs", "L2")
        .tile_out([1, 4, 16])
        .move_to("out", "VRF", vector_size=lanes)
        .to_accum()
        .split(1)
    )
    impl = schedule.synthesize()
    assert "move operand 2 to f32 VRF" in impl.tree()
    kernel = impl.compile()
    rng = np.random.default_rng(2)
    a = rng.standard_normal((8, 8), dtype=np.float32)
    b = rng.standard_normal((8, 16), dtype=np.float32)
    np.testing.assert_allclose(kernel(a, b), a @ b, rtol=1e-5, atol=1e-5)


def test_a_subschedule_names_a_node_by_its_path(db):
    def body(sub):
        sub.move_to("lhs", "L1")

    schedule = morello.Schedule("matmul 8x8x8", db=db).move_to("lhs", "L2").tile_out([1, 4, 8])
    schedule.subschedule([0], body)
    assert "cache operand 0 to f32 L1" in schedule.tree()
    assert schedule.synthesize().cost > 0


@pytest.mark.parametrize(
    "steps, message",
    [
        (lambda s: s.tile_out([1, 7, 3]), "cannot apply to Matmul"),
        (lambda s: s.tile_out([1, 16]), "tile_out 1x16"),
        (lambda s: s.split(4), "split 4"),
        (lambda s: s.tile("q", 4), "tile q 4"),
        (lambda s: s.move_to("rhs", "L1"), "operand rhs is in GL, which moves only to L2"),
        (lambda s: s.move_to("middle", "L2"), "middle"),
        (lambda s: s.move_to("lhs", "L9"), "L9"),
        (lambda s: s.select("NoSuchKernel"), "NoSuchKernel"),
        (lambda s: s.subschedule([3], lambda sub: None), "sub 3"),
        (lambda s: s.apply_text("tile_out 1x8x8\nfrobnicate\n"), "line 2, column 1"),
        (lambda s: s.move_to(1.5, "L2"), "its index"),
    ],
)
def test_an_illegal_step_is_refused_with_its_reason_and_not_kept(db, steps, message):
    schedule = morello.Schedule("matmul 64x64x64", db=db)
    before = schedule.tree()
    with pytest.raises(morello.MorelloError, match=message):
        steps(schedule)
    assert schedule.tree() == before
