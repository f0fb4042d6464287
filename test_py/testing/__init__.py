"""Helpers of the Python tests, imported as `from testing.op_testing import check`
(conftest.py puts test_py/ on sys.path)."""
