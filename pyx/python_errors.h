#pragma once
// C++ exceptions into Python exceptions for the Cython module (`except +RaisePyError`):
// PyTorch's errors keep their Python class and lose the C++ backtrace that what() carries
// (as in PyTorch's own bindings); the standard library's map as Cython's default would.
#include <Python.h>
#include <c10/util/Exception.h>

#include <stdexcept>

namespace torch_xla::python {

// Called inside a catch block: sets the Python error of the exception being handled.
inline int RaisePyError() {
  try {
    throw;
  } catch (const c10::IndexError& e) {
    PyErr_SetString(PyExc_IndexError, e.what_without_backtrace());
  } catch (const c10::ValueError& e) {
    PyErr_SetString(PyExc_ValueError, e.what_without_backtrace());
  } catch (const c10::TypeError& e) {
    PyErr_SetString(PyExc_TypeError, e.what_without_backtrace());
  } catch (const c10::NotImplementedError& e) {
    PyErr_SetString(PyExc_NotImplementedError, e.what_without_backtrace());
  } catch (const c10::Error& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what_without_backtrace());
  } catch (const std::invalid_argument& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::out_of_range& e) {
    PyErr_SetString(PyExc_IndexError, e.what());
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception");
  }
  return -1;
}

}  // namespace torch_xla::python
