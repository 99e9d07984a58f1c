#include "injection/process_state.h"

#include <atomic>

namespace cutrace::injection {
namespace {

std::atomic<Session*> g_current_session{nullptr};
IntakeWarnings g_intake_warnings;

}  // namespace

Session* CurrentSession() { return g_current_session.load(std::memory_order_acquire); }

void PublishSession(Session* session) { g_current_session.store(session, std::memory_order_release); }

void WithdrawSession(Session* session) {
  Session* expected = session;
  g_current_session.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel);
}

IntakeWarnings& IntakeWarningsSaid() { return g_intake_warnings; }

}  // namespace cutrace::injection
