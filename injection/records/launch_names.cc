// Kernel names by correlation id: see launch_names.h.
#include "injection/records/launch_names.h"

namespace cutrace::injection {

bool LaunchNames::Activate() {
  if (activating_.exchange(true, std::memory_order_acq_rel)) return false;
  slots_ = std::make_unique<std::atomic<uint64_t>[]>(kSlots);
  for (uint32_t i = 0; i < kSlots; ++i) slots_[i].store(0, std::memory_order_relaxed);
  active_.store(true, std::memory_order_release);
  return true;
}

void LaunchNames::Put(uint32_t correlation, uint32_t name_id) {
  if (!active() || name_id == 0) return;
  slots_[correlation % kSlots].store(Pack(correlation, name_id), std::memory_order_relaxed);
}

uint32_t LaunchNames::Take(uint32_t correlation) const {
  if (!active()) return 0;
  uint64_t v = slots_[correlation % kSlots].load(std::memory_order_relaxed);
  return static_cast<uint32_t>(v >> 32) == correlation ? static_cast<uint32_t>(v) : 0;
}

void LaunchNames::Forget() {
  if (!active()) return;
  for (uint32_t i = 0; i < kSlots; ++i) slots_[i].store(0, std::memory_order_relaxed);
}

}  // namespace cutrace::injection
