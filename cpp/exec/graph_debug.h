#pragma once
// The debugging aids of the executor, each turned on by an environment variable:
//
// - XLA_SAVE_TENSORS_FILE=<path> appends every graph run at a sync to the file, with the
//   user's frames that caused the sync; XLA_SAVE_TENSORS_FMT picks the form: `text` (the
//   IR, default), `stablehlo` or `dot` (Graphviz).
// - PT_XLA_DEBUG_LEVEL=1 (or PT_XLA_DEBUG=1) prints, at each compilation, why it happens:
//   the first graph synced at that line of the user's program, or what changed since the
//   graph compiled for that line (input shapes, or the graph itself).
//
// Graphs are rendered from their nodes in post-order (operands first) and their roots;
// node locations come from IR debugging (ir/debug_location.h).
#include <string>
#include <vector>

#include "ir/node.h"

namespace torch_xla::exec {

// The IR of a graph as text: one line per node, "%i = op(%operands) shape  # location".
std::string GraphText(const std::vector<const ir::Node*>& nodes, const std::vector<ir::Value>& roots);
// The same graph in Graphviz's dot language.
std::string GraphDot(const std::vector<const ir::Node*>& nodes, const std::vector<ir::Value>& roots);

// $PT_XLA_DEBUG_LEVEL (or 1 for $PT_XLA_DEBUG=1), 0 when unset.
int DebugLevel();

// Whether graphs are saved ($XLA_SAVE_TENSORS_FILE is set).
bool SavingGraphs();
// Appends a graph to $XLA_SAVE_TENSORS_FILE. `render(format)` gives the graph in the
// format asked for ("text", "stablehlo" or "dot").
template <typename Render>
void SaveGraph(uint64_t hash, Render&& render);
void AppendSavedGraph(uint64_t hash, const std::string& format_name, const std::string& graph);
const std::string& SavedGraphFormat();

// At a compilation (PT_XLA_DEBUG_LEVEL >= 1): explains to stderr why the graph of
// `hash`, with these input and output shapes and `ops` nodes, compiles: the first graph
// synced at the user's line, the shapes that changed since the one compiled for it, or
// else that the graph itself changed.
void ExplainCompilation(uint64_t hash, const std::vector<std::string>& input_shapes,
                        const std::vector<std::string>& output_shapes, std::size_t ops);

template <typename Render>
void SaveGraph(uint64_t hash, Render&& render) {
  const std::string& format = SavedGraphFormat();
  AppendSavedGraph(hash, format, render(format));
}

}  // namespace torch_xla::exec
