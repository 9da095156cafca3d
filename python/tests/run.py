"""run.py - meson's entry to the package's tests (suite `python`):
    python3 run.py TESTS_DIR [pytest arguments]
Exits 77 (meson: skipped) with the reason when pytest cannot be imported;
otherwise pytest's status. meson sets PYTHONPATH to the build directory's
python/ (the package, extension included) and HIPOBJ_TEST_SERVER."""
import sys

try:
    import pytest
except ImportError as e:
    print(f"python tests skipped: pytest is not installed ({e}); "
          "Debian: apt-get install python3-pytest", flush=True)
    sys.exit(77)

tests = sys.argv[1]
# -rs prints why each skipped test was skipped; no cache in the source tree.
args = [tests, "-v", "-rs", "-p", "no:cacheprovider"] + sys.argv[2:]
status = pytest.main(args)
# pytest's 5 is "no tests collected": a suite that runs nothing must fail.
sys.exit(1 if status == 5 else int(status))
