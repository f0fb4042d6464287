#pragma once
// The user's Python frames, for IR debugging (ir/debug_location.h): the innermost frame
// outside torch and torch_xla names the line that made a node or caused a sync. Called
// from any thread (tracing threads release the GIL while PyTorch dispatches, autograd's
// threads have no frames): the GIL is taken here, and nothing is found without frames.
#include <Python.h>
#include <frameobject.h>

#include <string>
#include <string_view>

#include "ir/debug_location.h"

namespace torch_xla::python {

// Frames of the libraries, not the user's program.
inline bool IsLibraryFrame(std::string_view file) {
  return file.find("/torch/") != std::string_view::npos || file.find("/torch_xla/") != std::string_view::npos ||
         file.rfind("<frozen", 0) == 0 || file.find("/site-packages/_pytest/") != std::string_view::npos ||
         file.find("/site-packages/pluggy/") != std::string_view::npos;
}

// Calls visit(file, line, function) for each frame of the calling thread, innermost
// first, until it returns false.
template <typename Visit>
void WalkFrames(Visit&& visit) {
  if (!Py_IsInitialized()) return;
  PyGILState_STATE state = PyGILState_Ensure();
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  Py_XINCREF(frame);
  while (frame != nullptr) {
    PyCodeObject* code = PyFrame_GetCode(frame);  // new reference
    const char* file = PyUnicode_AsUTF8(code->co_filename);
    const char* name = PyUnicode_AsUTF8(code->co_name);
    bool more = visit(std::string_view(file ? file : "?"), PyFrame_GetLineNumber(frame), std::string_view(name ? name : "?"));
    Py_DECREF(code);
    PyFrameObject* back = more ? PyFrame_GetBack(frame) : nullptr;  // new reference
    Py_DECREF(frame);
    frame = back;
  }
  PyGILState_Release(state);
}

inline std::string CallerLocation() {
  std::string out;
  WalkFrames([&](std::string_view file, int line, std::string_view name) {
    if (IsLibraryFrame(file)) return true;
    out = std::string(file) + ":" + std::to_string(line) + " (" + std::string(name) + ")";
    return false;
  });
  return out;
}

inline std::vector<ir::Frame> CallerFrames() {
  std::vector<ir::Frame> frames;
  WalkFrames([&](std::string_view file, int line, std::string_view name) {
    frames.push_back(ir::Frame{std::string(file), line, std::string(name)});
    return true;
  });
  return frames;
}

inline void InstallCallerProviders() { ir::SetCallerProviders(&CallerLocation, &CallerFrames); }

}  // namespace torch_xla::python
