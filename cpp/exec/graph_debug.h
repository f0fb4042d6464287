#pragma once
// The debugging aids of the executor, each turned on by an environment variable:
//
// - XLA_SAVE_TENSORS_FILE=<path> appends every graph run at a sync to the file, with the
//   user's frames that caused the sync; XLA_SAVE_TENSORS_FMT picks the form: `text` (the
//   IR, default), `stablehlo` or `dot` (Graphviz).
// - PT_XLA_DEBUG_LEVEL=1 (or PT_XLA_DEBUG=1) analyses each compilation (why it happens,
//   and what changed since the graph compiled at the same line of the user's program);
//   level 2 each execution too (below).
//
// Graphs are rendered from their nodes in post-order (operands first) and their roots;
// node locations come from IR debugging (ir/debug_location.h).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/node.h"

namespace torch_xla::exec {

// The IR of a graph as text: one line per node, "%i = op(%operands) shape  # location".
std::string GraphText(const std::vector<const ir::Node*>& nodes, const std::vector<ir::Value>& roots);
// The same graph in Graphviz's dot language.
std::string GraphDot(const std::vector<const ir::Node*>& nodes, const std::vector<ir::Value>& roots);

// A graph's hash as the debugging aids print it: "3f2a9c..." (16 hex digits).
std::string GraphHashText(uint64_t hash);

// $PT_XLA_DEBUG_LEVEL, or every level (100) for $PT_XLA_DEBUG=1; 0 when unset.
int DebugLevel();

// Whether graphs are saved ($XLA_SAVE_TENSORS_FILE is set).
bool SavingGraphs();
// Appends a graph to $XLA_SAVE_TENSORS_FILE. `render(format)` gives the graph in the
// format asked for ("text", "stablehlo" or "dot").
template <typename Render>
void SaveGraph(uint64_t hash, Render&& render);
void AppendSavedGraph(uint64_t hash, const std::string& format_name, const std::string& graph);
const std::string& SavedGraphFormat();

// PT_XLA_DEBUG's analysis of each graph, in torch_xla's format: blocks of lines that
// begin "Compilation Analysis: " (level >= 1: why a graph compiles, the graph's name,
// hash, input and output counts, the Python frames of the sync), "Post Compilation
// Analysis: " (the compiled program's memory) and "Execution Analysis: " (level >= 2,
// each run). Written to $PT_XLA_DEBUG_FILE (appended) or stderr, by the first local
// process only; eager mode's one-op graphs are not analysed.
//
// Why a sync runs graphs: the Python layer names the syncs it makes for the user
// (torch_xla.compile, the parallel loader, a profiler StepTrace, torch.compile) for the
// calling thread; otherwise the executor's entry points give the cause (a step, or a
// value read before one).
struct SyncCause {
  std::string compilation;  // the cause a compilation names
  std::string execution;    // the cause an execution names
  std::string graph_name;   // "" when unnamed
};
// Sets (or, with empty causes, clears) the calling thread's sync cause.
void SetSyncCause(SyncCause cause);
// The executor's default cause for the calling thread's syncs in its scope (a cause set
// from Python takes precedence).
class DefaultSyncCause {
 public:
  explicit DefaultSyncCause(const char* cause);
  ~DefaultSyncCause();
  DefaultSyncCause(const DefaultSyncCause&) = delete;
  DefaultSyncCause& operator=(const DefaultSyncCause&) = delete;

 private:
  const char* saved_;
};
inline constexpr char kStepCause[] = "user torch_xla.sync";
inline constexpr char kValueReadCause[] = "most likely user code trying to access tensor value before torch_xla.sync";

// At a compilation (level >= 1). `input_shapes`/`output_shapes` also say what changed
// since the last graph compiled at the same line of the user's program.
void AnalyzeCompilation(uint64_t hash, const std::vector<std::string>& input_shapes,
                        const std::vector<std::string>& output_shapes, std::size_t ops);
// After a compilation (level >= 1): the program's sizes, as the plugin reports them.
struct ProgramSizes {
  int64_t arguments = -1, outputs = -1, aliased = -1, temporaries = -1, code = -1;  // bytes; -1 unknown
};
void AnalyzeCompiledProgram(const ProgramSizes& sizes);
// At each execution (level >= 2).
void AnalyzeExecution(uint64_t hash, std::size_t inputs, std::size_t outputs);

template <typename Render>
void SaveGraph(uint64_t hash, Render&& render) {
  const std::string& format = SavedGraphFormat();
  AppendSavedGraph(hash, format, render(format));
}

}  // namespace torch_xla::exec
