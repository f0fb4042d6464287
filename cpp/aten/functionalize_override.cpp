#include "aten/functionalize_override.h"

#include <string>
#include <utility>

namespace torch_xla {
namespace {

struct Silent : c10::WarningHandler {
  void process(const c10::Warning&) override {}
};

}  // namespace

FunctionalizeOverride::FunctionalizeOverride(const char* name, torch::CppFunction kernel, const char* file,
                                             uint32_t line)
    : op_(c10::Dispatcher::singleton().findSchemaOrThrow((std::string("aten::") + name).c_str(), "")),
      original_(op_.getComputedKernelForDispatchKey(c10::DispatchKey::Functionalize)) {
  // The dispatcher warns of any override; these are intended.
  Silent silent;
  c10::WarningUtils::WarningHandlerGuard quiet(&silent);
  library_ = std::make_unique<torch::Library>(torch::Library::IMPL, "aten", c10::DispatchKey::Functionalize, file,
                                              line);
  library_->impl(name, std::move(kernel));
}

}  // namespace torch_xla
