#pragma once
// Glue between Python objects and the C++ API for the Cython module: unpacks
// torch.Tensor objects (through torch's own python_variable.h) so that the .pyx file
// deals in Python objects only.
#include <Python.h>
#include <torch/csrc/autograd/python_variable.h>

#include <string>
#include <vector>

#include "aten/api.h"

namespace torch_xla::python {

inline std::vector<at::Tensor> UnpackTensors(PyObject* sequence) {
  std::vector<at::Tensor> out;
  PyObject* fast = PySequence_Fast(sequence, "expected a sequence of tensors");
  if (!fast) throw std::invalid_argument("expected a sequence of tensors");
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(fast, i);
    if (!THPVariable_Check(item)) {
      Py_DECREF(fast);
      throw std::invalid_argument("expected a torch.Tensor at position " + std::to_string(i));
    }
    out.push_back(THPVariable_Unpack(item));
  }
  Py_DECREF(fast);
  return out;
}

inline std::string GetStableHlo(PyObject* tensors) { return torch_xla::GetStableHlo(UnpackTensors(tensors)); }

}  // namespace torch_xla::python
