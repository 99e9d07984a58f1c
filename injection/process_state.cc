// See process_state.h. Every definition is constant-initialised (no code
// runs before main for any of them).
#include "injection/process_state.h"

#include "injection/log.h"

namespace cutrace::injection {
namespace {

constinit std::atomic<Session*> g_current_session{nullptr};
constinit OnceSaid g_said;
constinit std::atomic<int> g_log_level{static_cast<int>(LogLevel::kWarn)};
constinit LifecycleState g_lifecycle;
constinit ControlSignalState g_control_signals;
constinit HandoverState g_handover;
constinit std::atomic<RangeProfiler*> g_profiler{nullptr};
constinit std::atomic<int> g_capture_gate{kCaptureNone};

}  // namespace

Session* CurrentSession() { return g_current_session.load(std::memory_order_acquire); }

void PublishSession(Session* session) { g_current_session.store(session, std::memory_order_release); }

void WithdrawSession(Session* session) {
  Session* expected = session;
  g_current_session.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel);
}

OnceSaid& Said() { return g_said; }
std::atomic<int>& LogLevelState() { return g_log_level; }
LifecycleState& Lifecycle() { return g_lifecycle; }
ControlSignalState& ControlSignals() { return g_control_signals; }
HandoverState& Handover() { return g_handover; }
std::atomic<RangeProfiler*>& CurrentProfiler() { return g_profiler; }
std::atomic<int>& CaptureGate() { return g_capture_gate; }

}  // namespace cutrace::injection
