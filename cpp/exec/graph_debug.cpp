#include "exec/graph_debug.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "ir/debug_location.h"

namespace torch_xla::exec {
namespace {

std::string Hex(uint64_t hash) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(hash));
  return buf;
}

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
    if (const char* v = Env("PT_XLA_DEBUG")) return std::strcmp(v, "1") == 0 ? 1 : 0;
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
                       Hex(hash) + "\nFormat: " + format_name + "\n\n## BEGIN_GRAPH\n" + graph + "## END_GRAPH\n\n";
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

}  // namespace

void ExplainCompilation(uint64_t hash, const std::vector<std::string>& input_shapes,
                        const std::vector<std::string>& output_shapes, std::size_t ops) {
  struct Compiled {
    std::vector<std::string> inputs, outputs;
    std::size_t ops;
  };
  static std::mutex mu;
  static std::unordered_map<std::string, Compiled> by_line;  // the last graph compiled per sync line
  std::string line = ir::CurrentCaller();
  if (line.empty()) line = "an unknown line";
  std::string why;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = by_line.find(line);
    if (it == by_line.end()) {
      why = "the first graph synced at this line";
    } else {
      const Compiled& before = it->second;
      bool same_counts = before.inputs.size() == input_shapes.size() && before.outputs.size() == output_shapes.size();
      std::string changes = same_counts ? ShapeChanges("input", before.inputs, input_shapes) +
                                              ShapeChanges("output", before.outputs, output_shapes)
                                        : "";
      if (!changes.empty()) {
        why = "shapes changed since the graph compiled for this line:" + changes;
      } else {
        why = "the graph changed since the one compiled for this line (" + std::to_string(ops) + " ops, " +
              std::to_string(input_shapes.size()) + " inputs, " + std::to_string(output_shapes.size()) +
              " outputs; it had " + std::to_string(before.ops) + ", " + std::to_string(before.inputs.size()) + ", " +
              std::to_string(before.outputs.size()) + ")";
      }
    }
    by_line[line] = Compiled{input_shapes, output_shapes, ops};
  }
  std::fprintf(stderr, "pt-xla-debug: compiling graph %s (%zu ops, %zu inputs), synced at %s\npt-xla-debug:   why: %s\n",
               Hex(hash).c_str(), ops, input_shapes.size(), line.c_str(), why.c_str());
}

}  // namespace torch_xla::exec
