"""The committed reference vectors are what numpy computes now (not copied from the kernel)."""
import pytest
import vectors


@pytest.mark.parametrize("name", sorted(vectors.FILES))
def test_committed_vectors_match_numpy(name):
    committed = (vectors.VEC_DIR / name).read_text()
    assert committed == vectors.FILES[name](), f"{name} is stale: run python tests/vectors.py"
