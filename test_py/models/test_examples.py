"""The examples run on the XLA device and reach their targets."""
import os
import sys

sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'examples'))
import train_digits  # noqa: E402


def test_train_digits_reaches_95_percent_test_accuracy():
  accuracy = train_digits.train(verbose=False)
  assert accuracy >= 0.95, accuracy
