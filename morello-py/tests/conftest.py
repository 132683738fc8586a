"""Shared fixtures: one memo table for the whole session, so each spec is searched once and
later, smaller searches reuse its solved sub-specs (the suite stays within CI's budget)."""

import pytest

import morello


@pytest.fixture(scope="session")
def db(tmp_path_factory):
    """A memo table file of this test session (the user's default table is never touched)."""
    return tmp_path_factory.mktemp("table") / "x86.mdb"


@pytest.fixture(scope="session")
def db_one(tmp_path_factory):
    """The table of one processor (`processors=1`, `morello bench`'s default): a table is for one
    target, and the processor count is part of it."""
    return tmp_path_factory.mktemp("table") / "x86-1.mdb"


@pytest.fixture(scope="session")
def matmul64(db):
    """The optimal 64x64x64 f32 matmul for this host (searched once)."""
    return morello.search("matmul 64x64x64", db=db)
