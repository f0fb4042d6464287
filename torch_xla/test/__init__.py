"""Helpers for tests and training scripts (torch_xla.test.test_utils)."""
