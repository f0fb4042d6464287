#include "exec/graph_debug.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cctype>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "ir/debug_location.h"

namespace torch_xla::exec {
namespace {

// Node ids by position in post-order, for the renderings.
std::unordered_map<const ir::Node*, std::size_t> Ids(const std::vector<const ir::Node*>& nodes) {
  std::unordered_map<const ir::Node*, std::size_t> ids;
  for (std::size_t i = 0; i < nodes.size(); ++i) ids.emplace(nodes[i], i);
  return ids;
}

std::string ValueName(const std::unordered_map<const ir::Node*, std::size_t>& ids, const ir::Value& v) {
  std::string name = "%" + std::to_string(ids.at(v.node.get()));
  if (v.node->num_outputs() > 1) name += "." + std::to_string(v.index);
  return name;
}

std::string Shapes(const ir::Node& node) {
  std::string out;
  for (std::size_t i = 0; i < node.num_outputs(); ++i) out += (i ? ", " : "") + node.shape(i).ToString();
  return out;
}

std::string DotEscaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

}  // namespace

std::string GraphHashText(uint64_t hash) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(hash));
  return buf;
}

std::string GraphText(const std::vector<const ir::Node*>& nodes, const std::vector<ir::Value>& roots) {
  auto ids = Ids(nodes);
  std::string out = "IR {\n";
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node& node = *nodes[i];
    out += "  %" + std::to_string(i) + " = " + node.op().name() + "(";
    for (std::size_t k = 0; k < node.operands().size(); ++k)
      out += (k ? ", " : "") + ValueName(ids, node.operand(k));
    out += ") " + Shapes(node);
    if (node.leaf_kind() == ir::LeafKind::kScalar) out += " value=" + std::to_string(node.scalar_value());
    if (!node.location().empty()) out += "  # " + node.location();
    out += "\n";
  }
  out += "}\nroots:";
  for (const ir::Value& r : roots) out += " " + ValueName(ids, r);
  return out + "\n";
}

std::string GraphDot(const std::vector<const ir::Node*>& nodes, const std::vector<ir::Value>& roots) {
  auto ids = Ids(nodes);
  std::string out = "digraph G {\n";
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node& node = *nodes[i];
    std::string label = node.op().name() + "\\n" + Shapes(node);
    if (!node.location().empty()) label += "\\n" + node.location();
    out += "  node" + std::to_string(i) + " [label=\"" + DotEscaped(label) + "\"]\n";
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (const ir::Value& operand : nodes[i]->operands())
      out += "  node" + std::to_string(ids.at(operand.node.get())) + " -> node" + std::to_string(i) + "\n";
  }
  for (std::size_t r = 0; r < roots.size(); ++r) {
    out += "  root" + std::to_string(r) + " [shape=box, label=\"root " + std::to_string(r) + "\"]\n";
    out += "  node" + std::to_string(ids.at(roots[r].node.get())) + " -> root" + std::to_string(r) + "\n";
  }
  return out + "}\n";
}

int DebugLevel() {
  static const int level = [] {
    if (const char* v = Env("PT_XLA_DEBUG_LEVEL")) return std::atoi(v);
    // PT_XLA_DEBUG=1 (or on, yes, true, y) turns on every level, as in torch_xla.
    if (const char* v = Env("PT_XLA_DEBUG")) {
      std::string flag(v);
      for (char& c : flag) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return flag == "1" || flag == "on" || flag == "yes" || flag == "true" || flag == "y" ? 100 : 0;
    }
    return 0;
  }();
  return level;
}

bool SavingGraphs() { return Env("XLA_SAVE_TENSORS_FILE") != nullptr; }

const std::string& SavedGraphFormat() {
  static const std::string format = [] {
    const char* v = Env("XLA_SAVE_TENSORS_FMT");
    std::string f = v != nullptr ? v : "text";
    return f == "stablehlo" || f == "hlo" ? std::string("stablehlo") : f == "dot" ? f : std::string("text");
  }();
  return format;
}

void AppendSavedGraph(uint64_t hash, const std::string& format_name, const std::string& graph) {
  static std::mutex mu;
  std::string record = "[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n" + ir::CurrentStack() + "\nHash: " +
                       GraphHashText(hash) + "\nFormat: " + format_name + "\n\n## BEGIN_GRAPH\n" + graph + "## END_GRAPH\n\n";
  std::lock_guard<std::mutex> lock(mu);
  std::ofstream(Env("XLA_SAVE_TENSORS_FILE"), std::ios::app) << record;
}

namespace {

// " input 0 f32[3] -> f32[4];" for each position whose shape changed.
std::string ShapeChanges(const char* what, const std::vector<std::string>& before, const std::vector<std::string>& now) {
  std::string out;
  for (std::size_t i = 0; i < now.size() && i < before.size(); ++i) {
    if (now[i] != before[i]) out += std::string(" ") + what + " " + std::to_string(i) + " " + before[i] + " -> " + now[i] + ";";
  }
  return out;
}

// Why the graph compiles, beside its cause: the first graph synced at the user's line,
// the shapes that changed since the one compiled for it, or else that the graph changed.
std::string WhatChanged(const std::vector<std::string>& input_shapes, const std::vector<std::string>& output_shapes,
                        std::size_t ops) {
  struct Compiled {
    std::vector<std::string> inputs, outputs;
    std::size_t ops;
  };
  static std::mutex mu;
  static std::unordered_map<std::string, Compiled> by_line;  // the last graph compiled per sync line
  std::string line = ir::CurrentCaller();
  if (line.empty()) line = "an unknown line";
  std::string why;
  std::lock_guard<std::mutex> lock(mu);
  auto it = by_line.find(line);
  if (it == by_line.end()) {
    why = "the first graph synced at " + line;
  } else {
    const Compiled& before = it->second;
    bool same_counts = before.inputs.size() == input_shapes.size() && before.outputs.size() == output_shapes.size();
    std::string changes = same_counts ? ShapeChanges("input", before.inputs, input_shapes) +
                                            ShapeChanges("output", before.outputs, output_shapes)
                                      : "";
    if (!changes.empty()) {
      why = "shapes changed since the graph compiled at " + line + ":" + changes;
    } else {
      why = "the graph changed since the one compiled at " + line + " (" + std::to_string(ops) + " ops, " +
            std::to_string(input_shapes.size()) + " inputs, " + std::to_string(output_shapes.size()) +
            " outputs; it had " + std::to_string(before.ops) + ", " + std::to_string(before.inputs.size()) + ", " +
            std::to_string(before.outputs.size()) + ")";
    }
  }
  by_line[line] = Compiled{input_shapes, output_shapes, ops};
  return why;
}

thread_local SyncCause t_cause;
thread_local const char* t_default_cause = nullptr;

// The cause set from Python, else the executor's entry point's.
std::string Cause(bool compilation) {
  const std::string& set = compilation ? t_cause.compilation : t_cause.execution;
  if (!set.empty()) return set;
  return t_default_cause != nullptr ? t_default_cause : "a sync of the pending graph";
}

// The first local process writes the analysis (torchrun's and PJRT's local rank).
bool FirstLocalProcess() {
  static const bool first = [] {
    for (const char* name : {"PJRT_LOCAL_PROCESS_RANK", "LOCAL_RANK"}) {
      if (const char* v = Env(name)) return std::atoi(v) == 0;
    }
    return true;
  }();
  return first;
}

void Emit(const std::string& text) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (const char* file = Env("PT_XLA_DEBUG_FILE")) {
    std::ofstream(file, std::ios::app) << text;
  } else {
    std::fwrite(text.data(), 1, text.size(), stderr);
  }
}

const std::string kRule(80, '=');
const std::string kThinRule(80, '-');

// The calling thread's Python frames, innermost first, as "  function (file:line)" lines
// (at most $PT_XLA_DEBUG_MAX_FRAME, default 8, then "  .........."); empty without frames.
std::vector<std::string> FrameLines() {
  static const long max_frames = [] {
    const char* v = Env("PT_XLA_DEBUG_MAX_FRAME");
    return v != nullptr ? std::max(0L, std::atol(v)) : 8L;
  }();
  std::vector<std::string> out;
  for (const ir::Frame& f : ir::CurrentFrames()) {
    if (static_cast<long>(out.size()) == max_frames) {
      out.push_back("  ..........");
      break;
    }
    out.push_back("  " + f.function + " (" + f.file + ":" + std::to_string(f.line) + ")");
  }
  return out;
}

void AnalyzeGraph(const char* prefix, bool compilation, uint64_t hash, std::size_t inputs, std::size_t outputs,
                  const std::string& what_changed) {
  std::vector<std::string> frames = FrameLines();
  // No Python frames: a thread of PyTorch's autograd or of the runtime, nothing to show.
  if (frames.empty()) return;
  const std::string p = prefix;
  std::string out = "\n" + p + kRule + "\n";
  out += p + (compilation ? "Compilation Cause\n" : "Execution Cause\n");
  out += p + "  " + Cause(compilation) + "\n";
  if (!what_changed.empty()) out += p + "  (" + what_changed + ")\n";
  out += p + "Graph Info: \n";
  if (!t_cause.graph_name.empty()) out += p + "  Graph Name: " + t_cause.graph_name + "\n";
  out += p + "  Graph Hash: " + GraphHashText(hash) + "\n";
  out += p + "  Number of Graph Inputs: " + std::to_string(inputs) + "\n";
  out += p + "  Number of Graph Outputs: " + std::to_string(outputs) + "\n";
  out += p + "Python Frame Triggered Execution: \n";
  for (const std::string& frame : frames) out += p + frame + "\n";
  out += p + kThinRule + "\n";
  out += p + kRule + "\n";
  Emit(out);
}

std::string Gigabytes(int64_t bytes) {
  if (bytes < 0) return "Unknown ";
  char text[32];
  std::snprintf(text, sizeof text, "%.6f", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return text;
}

}  // namespace

void SetSyncCause(SyncCause cause) { t_cause = std::move(cause); }

DefaultSyncCause::DefaultSyncCause(const char* cause) : saved_(t_default_cause) { t_default_cause = cause; }
DefaultSyncCause::~DefaultSyncCause() { t_default_cause = saved_; }

void AnalyzeCompilation(uint64_t hash, const std::vector<std::string>& input_shapes,
                        const std::vector<std::string>& output_shapes, std::size_t ops) {
  if (DebugLevel() < 1 || !FirstLocalProcess()) return;
  AnalyzeGraph("Compilation Analysis: ", true, hash, input_shapes.size(), output_shapes.size(),
               WhatChanged(input_shapes, output_shapes, ops));
}

void AnalyzeCompiledProgram(const ProgramSizes& sizes) {
  if (DebugLevel() < 1 || !FirstLocalProcess()) return;
  const std::string p = "Post Compilation Analysis: ";
  std::string out = "\n" + p + kRule + "\n";
  out += p + "Graph input size: " + Gigabytes(sizes.arguments) + " GB\n";
  out += p + "Graph output size: " + Gigabytes(sizes.outputs) + " GB\n";
  out += p + "Aliased Input size: " + Gigabytes(sizes.aliased) + " GB\n";
  out += p + "Intermediate tensor size: " + Gigabytes(sizes.temporaries) + " GB\n";
  out += p + "Compiled program size: " + Gigabytes(sizes.code) + " GB\n";
  out += p + kThinRule + "\n";
  out += p + kRule + "\n";
  Emit(out);
}

void AnalyzeExecution(uint64_t hash, std::size_t inputs, std::size_t outputs) {
  if (DebugLevel() < 2 || !FirstLocalProcess()) return;
  AnalyzeGraph("Execution Analysis: ", false, hash, inputs, outputs, "");
}

}  // namespace torch_xla::exec
