#pragma once
// Where in the user's program an IR node was made, for debugging (XLA_IR_DEBUG=1 or
// XLA_HLO_DEBUG=1): the node keeps its caller's source line, which IR dumps print and
// (with XLA_HLO_DEBUG) the StableHLO carries as MLIR locations.
//
// The IR knows nothing of Python: the layer above that does (the Python bindings)
// installs the function that names the caller. Nothing is captured unless debugging is on.
#include <memory>
#include <string>
#include <vector>

namespace torch_xla::ir {

// One Python frame.
struct Frame {
  std::string file;
  int line = 0;
  std::string function;
};

// "file.py:12 (function)" of the innermost frame outside torch and torch_xla, or "".
using CallerFn = std::string (*)();
// All of the caller's frames, innermost first (none when unknown).
using FramesFn = std::vector<Frame> (*)();

void SetCallerProviders(CallerFn caller, FramesFn frames);
std::string CurrentCaller();
std::vector<Frame> CurrentFrames();
// CurrentFrames as text: "  file.py:12 (function)" lines, innermost last.
std::string CurrentStack();

// $XLA_IR_DEBUG or $XLA_HLO_DEBUG is 1: nodes keep their caller.
bool IrDebug();
// $XLA_HLO_DEBUG is 1: the StableHLO carries the callers as locations.
bool HloDebug();

}  // namespace torch_xla::ir
