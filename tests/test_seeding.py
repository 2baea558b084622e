"""Every test's inputs are its own: a module's generator drawn from inside tests is reseeded from the test's node id
(tests/conftest.py), and every hypothesis test is derandomized, so a test run alone, after others, or in reverse
order draws the same inputs."""
import numpy as np
from hypothesis import given, settings, strategies as st
from conftest import node_seed

rng = np.random.default_rng(12345)   # as the 15 modules with a module-level generator have it
DRAWN:dict[str, list] = {}

def test_module_rng_is_the_tests_own(request):
  want = np.random.default_rng(node_seed(request.node.nodeid)).integers(0, 1 << 30, 4)
  assert (rng.integers(0, 1 << 30, 4) == want).all()

def test_a_second_test_draws_its_own_numbers_whatever_ran_before(request):
  want = np.random.default_rng(node_seed(request.node.nodeid)).integers(0, 1 << 30, 4)
  assert (rng.integers(0, 1 << 30, 4) == want).all()
  rng.integers(0, 10, 1000)   # draws here do not move another test's inputs, whichever order they run in

def test_hypothesis_is_derandomized_for_every_test():
  assert settings.default.derandomize and settings.default.database is None
  assert settings(max_examples=5).derandomize   # a test's own @settings inherit it

@given(st.integers())
def test_a_hypothesis_test_draws_the_same_examples(x):
  DRAWN.setdefault("examples", []).append(x)

def test_the_examples_repeat():
  """The examples hypothesis drew above, drawn again: the same list."""
  first = DRAWN.pop("examples", None)
  test_a_hypothesis_test_draws_the_same_examples()
  again = DRAWN.pop("examples")
  if first is not None: assert first == again
  test_a_hypothesis_test_draws_the_same_examples()
  assert DRAWN.pop("examples") == again
