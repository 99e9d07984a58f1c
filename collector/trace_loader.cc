// See trace_loader.h. The loader is a TracePass (collector/trace_pass.h) that
// keeps every batch.
#include "collector/trace_loader.h"

#include <memory>

#include "collector/trace_pass.h"
#include "collector/trace_reader.h"

namespace cutrace {

StatusOr<TraceData> LoadTraceFromBytes(std::string_view bytes, std::string name) {
  TraceData data;
  StatusOr<std::unique_ptr<TracePass>> pass = TracePass::Start(bytes, std::move(name), &data);
  if (!pass.ok()) return pass.status();
  while ((*pass)->Next(&data.records)) {
  }
  (*pass)->Finish();
  return data;
}

StatusOr<TraceData> LoadTrace(const std::string& path) {
  StatusOr<std::unique_ptr<FileBytes>> file = FileBytes::Open(path);
  if (!file.ok()) return file.status();
  return LoadTraceFromBytes((*file)->bytes(), path);
}

}  // namespace cutrace
