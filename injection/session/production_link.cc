// Session: its link to the production modes (issue 5) — creating the
// ProductionController (production/production_controller.h) with the
// callbacks through which its control thread reaches CUPTI.
#include "injection/clock.h"
#include "injection/log.h"
#include "injection/session/session.h"

namespace cutrace::injection {

void Session::StartProduction() {
  ProductionConfig production = ParseProductionConfig(env_);
  for (const std::string& p : production.problems) Log(LogLevel::kWarn, "%s", p.c_str());
  if (!production.active()) return;
  if (ApplyModeDefaults(production, &config_)) {
    Log(LogLevel::kInfo, "continuous mode: no API records (CUTRACE_KINDS names them to record them), "
        "so that CUPTI can detach between windows");
  }
  std::vector<std::string> problems;
  MemoryBudget budget = ApplyMemoryCap(production, &config_, &problems);
  for (const std::string& p : problems) Log(LogLevel::kInfo, "%s", p.c_str());
  ProductionController::Callbacks cb;
  cb.stats = [this](const TraceWriter& w) { return CollectStats(w); };
  cb.set_activity = [this](bool on) { SetActivity(on); };
  // No cutrace lock is held by the control thread here: CUPTI calls
  // OnCompleted from inside FlushAll.
  cb.flush_activity = [this] {
    CUptiResult r = FlushOwnBuffers();
    if (r != CUPTI_SUCCESS) {
      Log(LogLevel::kDebug, "cuptiActivityFlushAll at a window's end: %s", api_->ResultString(r).c_str());
    }
    // The window's records are in: NVTX ranges still open are cut by its end.
    processor_->OnRecordingStopped();
  };
  cb.window_closed = [this] { RequestDetach(); };
  // Capture ranges (capture_control.cc).
  cb.sync_program_gpu = [this] {
    if (!api_->SynchronizeContext()) Log(LogLevel::kDebug, "capture range: no GPU wait at the range's end");
  };
  cb.chunk_opened = [this](const std::string& path) { WriteManifest(path); };
  cb.now = [this] { return TraceNow(); };
  production_ = std::make_unique<ProductionController>(std::move(production), budget, std::move(cb));
  Log(LogLevel::kInfo, "mode %s", ModeName(production_->config().mode));
}

bool Session::has_flight_recorder() const {
  return production_ != nullptr && production_->config().flight_recorder();
}

}  // namespace cutrace::injection
